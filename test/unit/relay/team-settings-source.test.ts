// The relay's holder of the team's settings and its reading of the settings file (relay/REFERENCE.md "Team settings").
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TEAM_SETTINGS, type TeamSettings } from '../../../shared/team-settings';
import { parseTeamSettingsFile, readTeamSettingsFile, TeamSettingsSource } from '../../../relay/team-settings-source';

const CUSTOM: TeamSettings = {
  breakReasons: ['Lunch'],
  afterCallWorkSeconds: 0,
  dispositions: ['Done'],
  dispositionRequired: true,
  serviceLevelSeconds: 30,
  timezone: 'Europe/London',
};

describe('TeamSettingsSource', () => {
  it('holds the defaults until replaced, tells its listeners of a change only, and hands out copies', () => {
    const source = new TeamSettingsSource();
    expect(source.current()).toEqual(DEFAULT_TEAM_SETTINGS);
    const heard: TeamSettings[] = [];
    const stop = source.onChange((settings) => heard.push(settings));
    expect(source.replace({ ...DEFAULT_TEAM_SETTINGS, breakReasons: [...DEFAULT_TEAM_SETTINGS.breakReasons] })).toBe(false);
    expect(heard).toEqual([]);
    expect(source.replace(CUSTOM)).toBe(true);
    expect(heard).toEqual([CUSTOM]);
    // Each field is a change, the lists' order too.
    for (const next of [{ ...CUSTOM, timezone: 'UTC' }, { ...CUSTOM, timezone: 'UTC', breakReasons: ['Lunch', 'Coffee'] }, { ...CUSTOM, timezone: 'UTC', breakReasons: ['Coffee', 'Lunch'] }]) {
      expect(source.replace(next)).toBe(true);
    }
    expect(heard).toHaveLength(4);
    source.current().breakReasons.push('Changed behind its back');
    expect(source.current().breakReasons).toEqual(['Coffee', 'Lunch']);
    stop();
    expect(source.replace(CUSTOM)).toBe(true);
    expect(heard).toHaveLength(4);
    expect(new TeamSettingsSource(CUSTOM).current()).toEqual(CUSTOM);
  });
});

describe('the team settings file', () => {
  it('fills what it leaves out with the defaults, and names the file, the field and the rule of what it breaks', async () => {
    expect(parseTeamSettingsFile('team.json', '{}')).toEqual({ ok: true, value: DEFAULT_TEAM_SETTINGS });
    expect(parseTeamSettingsFile('team.json', JSON.stringify({ breakReasons: ['Lunch'], dispositionRequired: true }))).toEqual({
      ok: true,
      value: { ...DEFAULT_TEAM_SETTINGS, breakReasons: ['Lunch'], dispositionRequired: true },
    });
    expect(parseTeamSettingsFile('team.json', JSON.stringify({ breakReasons: ['Lunch', ''] }))).toMatchObject({
      ok: false,
      error: { code: 'invalid_input', message: 'team.json: breakReasons[1]: must not be empty', field: 'breakReasons[1]' },
    });
    expect(parseTeamSettingsFile('team.json', JSON.stringify({ serviceLevelSeconds: 0 }))).toMatchObject({
      ok: false,
      error: { message: 'team.json: serviceLevelSeconds: must be a whole number from 1 to 3600' },
    });
    expect(parseTeamSettingsFile('team.json', '{ not json')).toMatchObject({ ok: false, error: { field: 'team.json' } });
    const dir = await mkdtemp(join(tmpdir(), 'relay-team-'));
    try {
      const path = join(dir, 'team.json');
      await writeFile(path, JSON.stringify(CUSTOM));
      expect(await readTeamSettingsFile(path)).toEqual({ ok: true, value: CUSTOM });
      expect(await readTeamSettingsFile(join(dir, 'none.json'))).toMatchObject({ ok: false, error: { message: `cannot read ${join(dir, 'none.json')}: no such file` } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
