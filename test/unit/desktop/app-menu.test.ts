// The application menu: none on Windows and Linux (Electron's English default menu is not the app's),
// the menu macOS expects on macOS, every label in the agent's language.
import { describe, expect, it } from 'vitest';
import type { MenuItemConstructorOptions } from 'electron';
import { appMenuTemplate } from '../../../electron/desktop/app-menu';
import { desktopTexts } from '../../../electron/desktop/desktop-texts';
import { LANGUAGES } from '../../../shared/i18n/languages';

/** Every item with its role and label, submenus flattened. */
function items(template: readonly MenuItemConstructorOptions[]): Array<{ role?: string; label?: string }> {
  return template.flatMap((item) => item.type === 'separator' ? [] : [
    { ...(item.role !== undefined ? { role: item.role } : {}), ...(item.label !== undefined ? { label: item.label } : {}) },
    ...(Array.isArray(item.submenu) ? items(item.submenu) : []),
  ]);
}

describe('appMenuTemplate', () => {
  it('has no menu bar on Windows and Linux', () => {
    expect(appMenuTemplate('win32', desktopTexts('en'))).toBeNull();
    expect(appMenuTemplate('linux', desktopTexts('es'))).toBeNull();
  });

  it('on macOS: the app, Edit and Window menus, their system roles kept', () => {
    const template = appMenuTemplate('darwin', desktopTexts('en'))!;
    expect(template.map((m) => m.label)).toEqual(['Softphone', 'Edit', 'Window']);
    expect(items(template).filter((i) => i.role !== undefined)).toEqual([
      { role: 'about', label: 'About Softphone' },
      { role: 'hide', label: 'Hide Softphone' },
      { role: 'hideOthers', label: 'Hide Others' },
      { role: 'unhide', label: 'Show All' },
      { role: 'quit', label: 'Quit Softphone' },
      { role: 'undo', label: 'Undo' },
      { role: 'redo', label: 'Redo' },
      { role: 'cut', label: 'Cut' },
      { role: 'copy', label: 'Copy' },
      { role: 'paste', label: 'Paste' },
      { role: 'selectAll', label: 'Select All' },
      { role: 'minimize', label: 'Minimize' },
      { role: 'close', label: 'Close Window' },
    ]);
  });

  it.each(LANGUAGES.filter((l) => l !== 'en'))('on macOS in %s: every label its own, none left in English', (language) => {
    const english = items(appMenuTemplate('darwin', desktopTexts('en'))!);
    const said = items(appMenuTemplate('darwin', desktopTexts(language))!);
    expect(said.map((i) => i.role)).toEqual(english.map((i) => i.role));
    said.forEach((item, i) => {
      expect(item.label, `${language} ${item.role ?? 'menu'}`).toBeTruthy();
      // The app's name stays as it is; the words around it change.
      if (english[i]!.label !== 'Softphone' && !(language === 'id' && english[i]!.label === 'Edit')) expect(item.label).not.toBe(english[i]!.label);
    });
  });
});
