// The IPC channel names, one per command and one per push. The preload and the main process both
// derive them from here so that a renamed command cannot leave one side listening on a dead channel.
import type { CommandName, PushName } from '../../shared/api';

export type CommandChannel = `softphone:${CommandName}`;
export type PushChannel = `softphone:push:${PushName}`;

export const commandChannel = (name: CommandName): CommandChannel => `softphone:${name}`;
export const pushChannel = (name: PushName): PushChannel => `softphone:push:${name}`;
