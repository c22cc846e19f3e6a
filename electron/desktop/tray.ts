// The tray icon: with the window closed to the tray it is the agent's only sign that the softphone is
// still running and reachable. The menu's content comes from trayMenuModel() (tray-menu.ts, pure);
// this file only hands it to Electron and wires the clicks.
import { Menu, Tray, type MenuItemConstructorOptions, type NativeImage } from 'electron';
import type { PresenceChoice } from '../../shared/api';
import type { DesktopTexts } from './desktop-texts';
import { trayMenuModel, type TrayMenuModel, type TrayState, type TrayStatus } from './tray-menu';

export interface TrayActions {
  show(): void;
  setPresence(choice: PresenceChoice): void;
  quit(): void;
}

/** The model as Electron menu items, each wired to its action. */
export function trayMenuTemplate(model: TrayMenuModel, actions: TrayActions): MenuItemConstructorOptions[] {
  return model.items.map((item): MenuItemConstructorOptions => {
    switch (item.kind) {
      case 'info':
        return { label: item.label, enabled: false };
      case 'missed':
      case 'show':
        return { label: item.label, click: () => actions.show() };
      case 'presence':
        return { label: item.label, type: 'radio', checked: item.checked, click: () => actions.setPresence(item.choice) };
      case 'quit':
        return { label: item.label, click: () => actions.quit() };
      case 'separator':
        return { type: 'separator' };
    }
  });
}

/**
 * The tray icon and its menu, rebuilt whenever the state changes (Electron menus are immutable). The
 * icon itself shows the status (a coloured dot: available, on a call, do not disturb, disconnected),
 * so the agent sees it without opening the menu; a status without its own image keeps the plain one.
 * The menu and the tooltip are worded in the texts' language: a change of language rebuilds them.
 */
export class TrayIcon {
  private readonly tray: Tray;
  private last: string | undefined;
  private shownStatus: TrayStatus | undefined;

  constructor(
    private readonly icon: NativeImage,
    private readonly actions: TrayActions,
    private readonly statusIcons: Partial<Record<TrayStatus, NativeImage>> = {},
  ) {
    this.tray = new Tray(icon);
    // Windows and some Linux panels open the window on a click; the menu is on the other button.
    this.tray.on('click', () => actions.show());
  }

  render(state: TrayState, texts: DesktopTexts): void {
    if (state.status !== this.shownStatus) {
      this.shownStatus = state.status;
      this.tray.setImage(this.statusIcons[state.status] ?? this.icon);
    }
    const model = trayMenuModel(state, texts);
    const key = JSON.stringify(model);
    if (key === this.last) return;
    this.last = key;
    this.tray.setToolTip(model.tooltip);
    this.tray.setContextMenu(Menu.buildFromTemplate(trayMenuTemplate(model, this.actions)));
  }

  destroy(): void {
    this.tray.destroy();
  }
}
