import { beforeEach, describe, expect, it, vi } from 'vitest';
import { desktopTexts, type DesktopTexts } from '../../../electron/desktop/desktop-texts';
import { TrayIcon } from '../../../electron/desktop/tray';
import { trayMenuModel, type TrayState } from '../../../electron/desktop/tray-menu';
import { Menu, NativeImage, resetFakeElectron, Tray } from './fake-electron';

vi.mock('electron', () => import('./fake-electron'));

const base: TrayState = { status: 'available', choice: 'available', missedCount: 0, windowVisible: true, refusedShortcuts: [] };
const english = desktopTexts('en');
const spanish = desktopTexts('es');
const arabic = desktopTexts('ar');
const model = (state: TrayState, texts: DesktopTexts = english) => trayMenuModel(state, texts);

/** The menu as the agent reads it: one line per item, radio items marked. */
function lines(state: TrayState, texts: DesktopTexts = english): string[] {
  return model(state, texts).items.map((item) => {
    switch (item.kind) {
      case 'separator':
        return '---';
      case 'presence':
        return `${item.checked ? '(x)' : '( )'} ${item.label}`;
      default:
        return item.label;
    }
  });
}

describe('tray menu model', () => {
  it('available, nothing missed: the status, Show, the presence choices and Quit', () => {
    expect(lines(base)).toEqual(['Status: Available', '---', 'Show', '---', '(x) Available', '( ) Do not disturb', '---', 'Quit']);
    expect(model(base).tooltip).toBe('Softphone: Available');
  });

  it('on a call with two missed calls: says both, and the chosen presence stays checked', () => {
    const state: TrayState = { ...base, status: 'on_call', missedCount: 2 };
    expect(lines(state)).toEqual(['Status: On a call', '2 missed calls', '---', 'Show', '---', '(x) Available', '( ) Do not disturb', '---', 'Quit']);
    expect(model(state).tooltip).toBe('Softphone: On a call, 2 missed calls');
  });

  it('do not disturb checks its radio item', () => {
    expect(lines({ ...base, status: 'dnd', choice: 'dnd' }).slice(0, 1)).toEqual(['Status: Do not disturb']);
    expect(lines({ ...base, status: 'dnd', choice: 'dnd' })).toContain('(x) Do not disturb');
    expect(lines({ ...base, status: 'dnd', choice: 'dnd' })).toContain('( ) Available');
  });

  it('says disconnected, and one missed call in the singular', () => {
    const state: TrayState = { ...base, status: 'disconnected', missedCount: 1 };
    expect(lines(state).slice(0, 2)).toEqual(['Status: Disconnected', '1 missed call']);
  });

  it('a hidden window is named in the tooltip: the agent can check that calls still ring', () => {
    expect(model({ ...base, windowVisible: false }).tooltip).toBe('Softphone: Available, window hidden, calls still ring');
  });

  it('lists global shortcuts another application holds', () => {
    const state: TrayState = { ...base, refusedShortcuts: [{ action: 'decline', accelerator: 'Ctrl+Shift+D' }] };
    expect(lines(state)[1]).toBe('Ctrl+Shift+D (Decline) is taken by another application');
  });

  it('speaks Spanish: status, plural of the missed calls (one, then other), the choices, the tooltip', () => {
    expect(lines({ ...base, missedCount: 1 }, spanish)).toEqual(['Estado: Disponible', '1 llamada perdida', '---', 'Mostrar', '---', '(x) Disponible', '( ) No molestar', '---', 'Salir']);
    const state: TrayState = { ...base, status: 'on_call', missedCount: 2, windowVisible: false };
    expect(lines(state, spanish).slice(0, 2)).toEqual(['Estado: En una llamada', '2 llamadas perdidas']);
    expect(model(state, spanish).tooltip).toBe('Softphone: En una llamada, 2 llamadas perdidas, ventana oculta, las llamadas siguen sonando');
    expect(lines({ ...base, refusedShortcuts: [{ action: 'hangUp', accelerator: 'Ctrl+Shift+H' }] }, spanish)[1]).toBe('Ctrl+Shift+H (Colgar) lo usa otra aplicación');
  });

  it('speaks Arabic with its plural forms (two is its own word), an Arabic comma, and shortcuts kept left to right', () => {
    const count = (missedCount: number) => lines({ ...base, status: 'disconnected', missedCount }, arabic)[1];
    expect(count(1)).toBe('مكالمة فائتة واحدة');
    expect(count(2)).toBe('مكالمتان فائتتان');
    expect(count(3)).toBe('3 مكالمات فائتة');
    expect(count(11)).toBe('11 مكالمة فائتة');
    expect(count(100)).toBe('100 مكالمة فائتة');
    const state: TrayState = { ...base, status: 'on_call', missedCount: 2, refusedShortcuts: [{ action: 'decline', accelerator: 'Ctrl+Shift+D' }] };
    expect(lines(state, arabic)).toEqual([
      'الحالة: في مكالمة',
      'مكالمتان فائتتان',
      'يستخدم تطبيق آخر \u2066Ctrl+Shift+D\u2069 (رفض)',
      '---',
      'إظهار',
      '---',
      '(x) متاح',
      '( ) عدم الإزعاج',
      '---',
      'إنهاء',
    ]);
    expect(model(state, arabic).tooltip).toBe('Softphone: في مكالمة، مكالمتان فائتتان');
  });

  it('the pseudo-locale gets English here (the main process does not make it)', () => {
    expect(model(base, desktopTexts('en-XA'))).toEqual(model(base));
  });
});

describe('tray icon', () => {
  beforeEach(() => {
    resetFakeElectron();
  });

  const actions = () => ({ show: vi.fn(), setPresence: vi.fn(), quit: vi.fn() });
  const image = new NativeImage('/opt/softphone/assets/icons/tray-icon.png', false);

  it('sets the menu and the tooltip from the model, and wires each item', () => {
    const wired = actions();
    const icon = new TrayIcon(image as never, wired);
    icon.render({ ...base, status: 'on_call', missedCount: 2 }, english);
    const tray = Tray.instances[0]!;
    expect(tray.image).toBe(image);
    expect(tray.tooltip).toBe('Softphone: On a call, 2 missed calls');
    const menu = tray.menu!;
    expect(menu.items.map((i) => i.label ?? '---')).toEqual(['Status: On a call', '2 missed calls', '---', 'Show', '---', 'Available', 'Do not disturb', '---', 'Quit']);
    expect(menu.items[0]!.enabled).toBe(false);
    expect(menu.items.filter((i) => i.type === 'radio').map((i) => [i.label, i.checked])).toEqual([
      ['Available', true],
      ['Do not disturb', false],
    ]);

    menu.click('Do not disturb');
    expect(wired.setPresence).toHaveBeenCalledWith('dnd');
    menu.click('Available');
    expect(wired.setPresence).toHaveBeenLastCalledWith('available');
    menu.click('Show');
    menu.click('2 missed calls');
    expect(wired.show).toHaveBeenCalledTimes(2);
    expect(() => menu.click('Status: On a call')).toThrow(/disabled/);
    expect(wired.quit).not.toHaveBeenCalled();
    menu.click('Quit');
    expect(wired.quit).toHaveBeenCalledTimes(1);

    tray.emit('click');
    expect(wired.show).toHaveBeenCalledTimes(3);
  });

  it('shows the status in the icon itself, and the plain icon for a status without its own', () => {
    const dot = (status: string) => new NativeImage(`/opt/softphone/assets/icons/tray-${status}.png`, false);
    const icons = { available: dot('available'), on_call: dot('on_call'), disconnected: dot('disconnected') };
    const icon = new TrayIcon(image as never, actions(), icons as never);
    const tray = Tray.instances[0]!;
    icon.render(base, english);
    expect(tray.current).toBe(icons.available);
    icon.render({ ...base, status: 'on_call' }, english);
    expect(tray.current).toBe(icons.on_call);
    icon.render({ ...base, status: 'disconnected' }, english);
    expect(tray.current).toBe(icons.disconnected);
    icon.render({ ...base, status: 'dnd', choice: 'dnd' }, english);
    expect(tray.current).toBe(image);
  });

  it('rebuilds the menu only when the state changes it', () => {
    const icon = new TrayIcon(image as never, actions());
    icon.render(base, english);
    icon.render({ ...base }, english);
    expect(Menu.buildFromTemplate).toHaveBeenCalledTimes(1);
    icon.render({ ...base, status: 'dnd', choice: 'dnd' }, english);
    expect(Menu.buildFromTemplate).toHaveBeenCalledTimes(2);
    expect(Tray.instances[0]!.menu!.items.find((i) => i.label === 'Do not disturb')!.checked).toBe(true);
    icon.destroy();
    expect(Tray.instances[0]!.destroyed).toBe(true);
  });

  it('a change of language rewords the menu and the tooltip, with the same state', () => {
    const wired = actions();
    const icon = new TrayIcon(image as never, wired);
    icon.render(base, english);
    icon.render(base, spanish);
    expect(Menu.buildFromTemplate).toHaveBeenCalledTimes(2);
    const tray = Tray.instances[0]!;
    expect(tray.tooltip).toBe('Softphone: Disponible');
    tray.menu!.click('No molestar');
    expect(wired.setPresence).toHaveBeenCalledWith('dnd');
    tray.menu!.click('Salir');
    expect(wired.quit).toHaveBeenCalledTimes(1);
  });
});
