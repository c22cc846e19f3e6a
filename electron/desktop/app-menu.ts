// The application menu, in the agent's language. Electron's default menu (File, Edit, View, Window,
// Help, with developer tools) is English and not the app's: on Windows and Linux there is no menu
// bar at all (Chromium's own shortcuts — copy, cut, paste, undo, select all — work in the fields
// without one), on macOS the menu the system expects, worded from the `desktop.menu` strings.
import type { MenuItemConstructorOptions } from 'electron';
import type { DesktopTexts } from './desktop-texts';

/** The menu for a platform and language; null: no application menu. */
export function appMenuTemplate(platform: NodeJS.Platform, texts: DesktopTexts): MenuItemConstructorOptions[] | null {
  if (platform !== 'darwin') return null;
  const { t } = texts;
  const name = t('windowTitle');
  return [
    {
      label: name,
      submenu: [
        { role: 'about', label: t('menu.about', { name }) },
        { type: 'separator' },
        { role: 'hide', label: t('menu.hide', { name }) },
        { role: 'hideOthers', label: t('menu.hideOthers') },
        { role: 'unhide', label: t('menu.showAll') },
        { type: 'separator' },
        { role: 'quit', label: t('menu.quit', { name }) },
      ],
    },
    {
      label: t('menu.edit'),
      submenu: [
        { role: 'undo', label: t('menu.undo') },
        { role: 'redo', label: t('menu.redo') },
        { type: 'separator' },
        { role: 'cut', label: t('menu.cut') },
        { role: 'copy', label: t('menu.copy') },
        { role: 'paste', label: t('menu.paste') },
        { role: 'selectAll', label: t('menu.selectAll') },
      ],
    },
    {
      label: t('menu.window'),
      submenu: [
        { role: 'minimize', label: t('menu.minimize') },
        { role: 'close', label: t('menu.close') },
      ],
    },
  ];
}
