// The team's settings as the relay holds them (relay/REFERENCE.md "Team settings"): read from
// `--team-config` at start and again on SIGHUP, or the defaults. One holder per relay: the endpoints
// read `current()` at each request, and the event streams hear of each change (`event: team`).
import { readFile } from 'node:fs/promises';
import { err, type Result } from '../shared/result';
import { DEFAULT_TEAM_SETTINGS, parseTeamSettings, type TeamSettings } from '../shared/team-settings';

/** The settings in force and who hears of a change; a reload that changes nothing tells nobody. */
export class TeamSettingsSource {
  private settings: TeamSettings;
  private readonly listeners = new Set<(settings: TeamSettings) => void>();

  constructor(initial: TeamSettings = DEFAULT_TEAM_SETTINGS) {
    this.settings = copyOf(initial);
  }

  /** The settings in force now (a copy: nobody changes them behind the holder's back). */
  current(): TeamSettings {
    return copyOf(this.settings);
  }

  /** Puts `next` in force; its listeners hear of it when it differs. Returns whether it did. */
  replace(next: TeamSettings): boolean {
    if (sameSettings(this.settings, next)) return false;
    this.settings = copyOf(next);
    for (const listener of [...this.listeners]) listener(this.current());
    return true;
  }

  /** Called with the new settings after each change; returns the unsubscribe. */
  onChange(listener: (settings: TeamSettings) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Reads and checks a team settings file; each error names the file, and the field and rule broken. */
export async function readTeamSettingsFile(path: string): Promise<Result<TeamSettings>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return err('invalid_input', `cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`, { field: path });
  }
  return parseTeamSettingsFile(path, text);
}

export function parseTeamSettingsFile(path: string, text: string): Result<TeamSettings> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return err('invalid_input', `${path} is not valid JSON: ${(e as Error).message}`, { field: path });
  }
  const parsed = parseTeamSettings(json);
  if (!parsed.ok) return err('invalid_input', `${path}: ${parsed.error.message}`, { field: parsed.error.field ?? path });
  return parsed;
}

function copyOf(settings: TeamSettings): TeamSettings {
  return { ...settings, breakReasons: [...settings.breakReasons], dispositions: [...settings.dispositions] };
}

/** Every setting, in one order: two settings compare as their JSON in it, whatever fields are added later. */
const SETTING_NAMES = Object.keys(DEFAULT_TEAM_SETTINGS);

function sameSettings(a: TeamSettings, b: TeamSettings): boolean {
  return JSON.stringify(a, SETTING_NAMES) === JSON.stringify(b, SETTING_NAMES);
}
