// Settings → Network: the draft and its checks, where refusals land, the store's slice, and the
// save as the settings domain does it against the main process's real network settings store (real
// files in a temporary directory).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NetworkSettingsStore } from '../../../electron/core/network-settings';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { commandSchemas, type SoftphoneApi } from '../../../shared/api';
import type { RelayTurnStatus } from '../../../shared/ice-servers';
import { err, ok, type Result } from '../../../shared/result';
import type { PublicSettings } from '../../../shared/settings';
import { fieldError, parseWith } from '../../../shared/validation';
import { term, text } from '../../../shared/i18n/text';
import { SettingsActions, type SettingsActionsDeps } from '../../../renderer/app/settings-actions';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import {
  draftFromNetwork,
  networkErrorsFrom,
  relayOnlyWarning,
  relayTurnNote,
  serverLines,
  validateNetworkDraft,
  type NetworkDraft,
} from '../../../renderer/store/network-form';
import { appStore, resetStore } from '../../../renderer/store/store';
import { accountSettings, noNetwork, sandboxSettings } from './fixtures';

const state = () => appStore.getState();
const NETWORK_SAVED_TEXT = 'Network settings saved. They apply from the next call.';
const RELAY_ONLY_WARNING = 'Relay only needs a TURN server: add one, or calls will not connect.';
const draft = (patch: Partial<NetworkDraft> = {}): NetworkDraft => ({ servers: '', turnUsername: '', turnPassword: '', relayOnly: false, ...patch });

describe('the Network draft', () => {
  it('starts blank, and from settings with the servers one per line and the password blank', () => {
    expect(draftFromNetwork(null)).toEqual(draft());
    expect(draftFromNetwork(accountSettings.network)).toEqual({
      servers: 'stun:stun.example.com:3478\nturns:turn.example.com:443',
      turnUsername: 'agent-7',
      turnPassword: '',
      relayOnly: false,
    });
  });

  it('counts lines as the agent sees them, blank ones and either line ending included', () => {
    expect(serverLines('  stun:a.example:3478 \r\n\n\tturn:b.example:443?transport=tcp\r\n  \n')).toEqual([
      { line: 1, url: 'stun:a.example:3478' },
      { line: 3, url: 'turn:b.example:443?transport=tcp' },
    ]);
    expect(serverLines('')).toEqual([]);
  });

  it('names the line of each bad server, and checks every field at once', () => {
    const checked = validateNetworkDraft(
      draft({ servers: 'stun:a.example:3478\n\nhttp://b.example\nturn:c.example:3478\nstun:d.example?transport=tcp', turnUsername: '', turnPassword: '' }),
      noNetwork,
    );
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(Object.keys(checked.errors).sort()).toEqual(['servers', 'turnPassword', 'turnUsername']);
    const [third, fifth, more] = checked.errors.servers!.split('; ');
    expect(third).toMatch(/^Line 3: must be stun:HOST\[:PORT\], turn:HOST\[:PORT\] or turns:HOST\[:PORT\].*\(got "http:\/\/b\.example"\)$/);
    expect(fifth).toMatch(/^Line 5: must be stun:HOST/);
    expect(more).toBeUndefined();
    expect(checked.errors.turnUsername).toBe('The TURN username is required for a turn: or turns: server');
    expect(checked.errors.turnPassword).toBe('The TURN password is required for a turn: or turns: server');
  });

  it('refuses more servers than a call may gather from, and credentials too long', () => {
    const servers = Array.from({ length: 11 }, (_, i) => `stun:s${i}.example:3478`).join('\n');
    const checked = validateNetworkDraft(draft({ servers, turnUsername: 'u'.repeat(600) }), noNetwork);
    expect(checked.ok ? null : checked.errors).toEqual({ servers: 'Must list at most 10 servers', turnUsername: 'The TURN username is too long (512 characters at most)' });
  });

  it('keeps the stored password when the field is blank, and leaves it to the main process while the command line rules', () => {
    const turn = draft({ servers: 'turns:turn.example.com:443', turnUsername: ' agent-7 ' });
    expect(validateNetworkDraft(turn, accountSettings.network)).toEqual({
      ok: true,
      input: { servers: ['turns:turn.example.com:443'], turnUsername: 'agent-7', turnPassword: '', relayOnly: false },
      lines: [1],
    });
    expect(validateNetworkDraft(turn, { ...noNetwork, fromCommandLine: true }).ok).toBe(true);
    expect(validateNetworkDraft(turn, noNetwork).ok).toBe(false);
  });

  it('sends what the main process accepts: the same schema on both sides', () => {
    const checked = validateNetworkDraft(
      draft({ servers: '\nstun:[2001:db8::1]:3478\nturn:turn.example.com:443?transport=tcp', turnUsername: 'agent', turnPassword: '  s3cret ', relayOnly: true }),
      noNetwork,
    );
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(checked.lines).toEqual([2, 3]);
    expect(checked.input.turnPassword).toBe('  s3cret ');
    expect(parseWith(commandSchemas.saveNetworkSettings, { network: checked.input }).ok).toBe(true);
  });
});

describe('refusals from the main process', () => {
  it('puts a server refusal on the line it came from', () => {
    const refused = parseWith(commandSchemas.saveNetworkSettings, {
      network: { servers: ['stun:a.example', 'stun:bad host', 'turn:c.example', 'ftp://d'], relayOnly: 'yes' },
    });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.error.field).toBe('network.servers[1]');
    // The box had a blank line at the top and one between the first two servers.
    const placed = networkErrorsFrom(refused.error, [2, 4, 5, 6]);
    expect(placed.form).toBeNull();
    expect(placed.fields.servers).toMatch(/^Line 4: must be stun:HOST.*\(got "stun:bad host"\); Line 6: must be stun:HOST.*\(got "ftp:\/\/d"\)$/);
    expect(placed.fields.relayOnly).toBe('Must be true or false');
  });

  it('places the store\'s own rules, and leaves what names no field above the form', () => {
    const noUsername = fieldError('invalid_input', 'turnUsername', text('network.turnCredentialRequired', { what: term('turnUsername') }));
    expect(!noUsername.ok && noUsername.error.message).toBe('turnUsername: the TURN username is required for a turn: or turns: server');
    expect(!noUsername.ok && networkErrorsFrom(noUsername.error, [1])).toEqual({
      fields: { turnUsername: 'The TURN username is required for a turn: or turns: server' },
      form: null,
    });
    expect(networkErrorsFrom({ message: 'The network settings could not be written' }, [])).toEqual({ fields: {}, form: 'The network settings could not be written' });
    expect(networkErrorsFrom({ field: 'network.turnPassword', message: 'kept nowhere' }, [])).toEqual({ fields: { turnPassword: 'Kept nowhere' }, form: null });
  });
});

describe('what the section says', () => {
  it('warns when "Relay only" has no TURN server to go through', () => {
    expect(relayOnlyWarning(draft({ relayOnly: true, servers: 'stun:a.example:3478' }), 'not_offered')).toBe(RELAY_ONLY_WARNING);
    expect(relayOnlyWarning(draft({ relayOnly: true, servers: 'turn:bad host' }), 'unreachable')).toBe(RELAY_ONLY_WARNING);
    expect(relayOnlyWarning(draft({ relayOnly: true, servers: 'stun:a.example\n turns:b.example:443 ' }), 'unknown')).toBeNull();
    expect(relayOnlyWarning(draft({ relayOnly: true }), 'available')).toBeNull();
    expect(relayOnlyWarning(draft({ relayOnly: false }), 'not_offered')).toBeNull();
  });

  it('says where TURN comes from', () => {
    const notes = (['available', 'not_offered', 'unreachable', 'unknown'] as const).map((s) => relayTurnNote(s));
    expect(notes[0]).toEqual({ text: 'The relay hands out TURN credentials: calls use its TURN servers without a password.', tone: 'info' });
    expect(notes[1]?.tone).toBe('quiet');
    expect(notes[2]?.tone).toBe('warning');
    expect(notes[3]).toBeNull();
    expect(relayTurnNote(undefined)).toBeNull();
  });
});

describe('in another language', () => {
  afterEach(async () => {
    await setUiLanguage('en', undefined);
  });

  it('the window\u2019s own words are Spanish; the shared schema\u2019s rule too', async () => {
    await setUiLanguage('es', undefined);
    const checked = validateNetworkDraft(draft({ servers: 'turn:a.example:3478\nstun:bad host:3478' }), noNetwork);
    expect(checked.ok).toBe(false);
    if (!checked.ok) {
      expect(checked.errors.servers).toMatch(/^Línea 2: debe ser stun:HOST\[:PORT\].* \(se recibió "stun:bad host:3478"\)$/);
      expect(checked.errors.turnUsername).toBe('El usuario TURN es obligatorio para un servidor turn: o turns:');
    }
    expect(relayOnlyWarning(draft({ relayOnly: true }), 'not_offered')).toBe('Solo relay necesita un servidor TURN: agrega uno o las llamadas no se conectarán.');
    expect(relayTurnNote('unreachable')?.text).toMatch(/^No se pudieron obtener las credenciales TURN del relay/);
  });
});

describe('the Network slice of the store', () => {
  beforeEach(() => resetStore());

  it('is filled from settings unless the agent is editing it, and survives leaving Settings', () => {
    state().setSettings(accountSettings);
    expect(state().networkForm.draft.turnUsername).toBe('agent-7');
    state().setScreen('settings');
    state().editNetwork('servers', 'stun:typed.example');
    state().editNetwork('relayOnly', true);
    state().setScreen('phone');
    state().setSettings({ ...accountSettings, network: noNetwork });
    state().setScreen('settings');
    expect(state().networkForm.draft).toMatchObject({ servers: 'stun:typed.example', relayOnly: true, turnUsername: 'agent-7' });
    expect(state().networkForm.dirty).toBe(true);
  });

  it('clears a field error when that field is edited, and the status', () => {
    state().setNetworkForm({ errors: { servers: 'Line 1: bad', turnUsername: 'missing' }, status: NETWORK_SAVED_TEXT });
    state().editNetwork('servers', 'stun:a.example');
    expect(state().networkForm.errors).toEqual({ turnUsername: 'missing' });
    expect(state().networkForm.status).toBeNull();
  });
});

describe('saving the Network section', () => {
  let dataDir: string;
  let network: NetworkSettingsStore;
  let sent: unknown[];
  let refuseWith: Result<never> | undefined;
  let relayTurn: RelayTurnStatus;

  /** The settings domain's commands, answered by the main process's own network store. */
  function actions(): SettingsActions {
    const notHere = async () => err('not_available', 'not part of this test');
    const api: SettingsActionsDeps['api'] = {
      saveSettings: notHere,
      clearSettings: notHere,
      setPreferences: notHere,
      saveServiceCapture: notHere,
      saveNetworkSettings: async (params) => {
        sent.push(params);
        if (refuseWith) return refuseWith;
        const parsed = parseWith(commandSchemas.saveNetworkSettings, params);
        if (!parsed.ok) return parsed;
        const saved = await network.save(parsed.value.network);
        if (!saved.ok) return saved;
        const settings: PublicSettings = { ...sandboxSettings, network: await network.publicSettings(relayTurn) };
        return ok(settings);
      },
    } satisfies Pick<SoftphoneApi, keyof SettingsActionsDeps['api']>;
    return new SettingsActions({ api, store: appStore });
  }

  beforeEach(async () => {
    resetStore();
    dataDir = await mkdtemp(join(tmpdir(), 'network-form-'));
    network = new NetworkSettingsStore({ dataDir, secrets: new MemorySecretStore() });
    sent = [];
    refuseWith = undefined;
    relayTurn = 'not_offered';
    state().setSettings(sandboxSettings);
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('sends nothing while a field breaks a rule, keeps what was typed and says where to go first', async () => {
    const settings = actions();
    settings.editNetwork('servers', 'turn:a.example:3478\nstun:bad host:3478');
    settings.editNetwork('turnUsername', 'agent');
    await expect(settings.saveNetwork()).resolves.toBe('servers');
    expect(sent).toEqual([]);
    expect(state().networkForm.errors.servers).toMatch(/^Line 2: must be stun:HOST/);
    expect(state().networkForm.errors.turnPassword).toMatch(/required/);
    expect(state().networkForm.draft).toMatchObject({ servers: 'turn:a.example:3478\nstun:bad host:3478', turnUsername: 'agent' });
  });

  it('saves, empties the password, shows "stored", and is refilled from what the main process keeps', async () => {
    const settings = actions();
    settings.editNetwork('servers', ' stun:a.example:3478\n\nturn:b.example:443?transport=tcp ');
    settings.editNetwork('turnUsername', 'agent');
    settings.editNetwork('turnPassword', 's3cret-pass');
    settings.editNetwork('relayOnly', true);
    await expect(settings.saveNetwork()).resolves.toBeNull();
    expect(sent).toEqual([
      { network: { servers: ['stun:a.example:3478', 'turn:b.example:443?transport=tcp'], turnUsername: 'agent', turnPassword: 's3cret-pass', relayOnly: true } },
    ]);
    const form = state().networkForm;
    expect(form).toMatchObject({ busy: false, dirty: false, errors: {}, formError: null, status: NETWORK_SAVED_TEXT });
    expect(form.draft).toEqual({ servers: 'stun:a.example:3478\nturn:b.example:443?transport=tcp', turnUsername: 'agent', turnPassword: '', relayOnly: true });
    expect(state().settings?.network).toMatchObject({ hasTurnPassword: true, relayOnly: true, turnUsername: 'agent' });
    expect(JSON.stringify(state())).not.toContain('s3cret-pass');
    await expect(network.own()).resolves.toEqual({
      iceServers: [{ urls: ['stun:a.example:3478'] }, { urls: ['turn:b.example:443?transport=tcp'], username: 'agent', credential: 's3cret-pass' }],
      iceTransportPolicy: 'relay',
    });

    // A blank password now keeps the stored one.
    settings.editNetwork('relayOnly', false);
    await expect(settings.saveNetwork()).resolves.toBeNull();
    await expect(network.own()).resolves.toMatchObject({ iceServers: [{}, { credential: 's3cret-pass' }], iceTransportPolicy: 'all' });
  });

  it('places a refusal next to its field and keeps the draft; other failures go above the form', async () => {
    const settings = actions();
    settings.editNetwork('servers', '\nstun:a.example\nstun:b.example');
    // A rule in the main process's own words, placed on a server's line.
    refuseWith = fieldError('invalid_input', 'network.servers[1]', 'must be reachable');
    await expect(settings.saveNetwork()).resolves.toBe('servers');
    expect(state().networkForm).toMatchObject({ busy: false, errors: { servers: 'Line 3: must be reachable' }, formError: null, status: null });
    expect(state().networkForm.draft.servers).toBe('\nstun:a.example\nstun:b.example');

    refuseWith = err('gateway_unreachable', 'socket hang up');
    await expect(settings.saveNetwork()).resolves.toBeNull();
    expect(state().networkForm.formError).toMatch(/Cannot reach/);
    expect(state().networkForm.draft.servers).toBe('\nstun:a.example\nstun:b.example');
    expect(state().networkForm.dirty).toBe(true);
  });

  it('places the main process\'s refusal of a missing password, which the window could not foresee', async () => {
    const settings = actions();
    // The window believes a password is stored (e.g. from the command line); the store has none.
    state().setSettings({ ...sandboxSettings, network: { ...noNetwork, hasTurnPassword: true, fromCommandLine: true } });
    settings.editNetwork('servers', 'turns:turn.example.com:443');
    settings.editNetwork('turnUsername', 'agent');
    await expect(settings.saveNetwork()).resolves.toBe('turnPassword');
    expect(sent).toHaveLength(1);
    expect(state().networkForm.errors).toEqual({ turnPassword: 'The TURN password is required for a turn: or turns: server' });
    expect(state().networkForm.draft.turnUsername).toBe('agent');
  });
});
