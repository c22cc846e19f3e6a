import { describe, expect, it } from 'vitest';
import {
  COMMAND_NAMES,
  commandSchemas,
  PUSH_NAMES,
  pushListenerName,
  wsClientFrameSchema,
  type CommandName,
  type CommandResults,
  type PushName,
  type PushPayloads,
  type SoftphonePushes,
} from '../../../shared/api';
import { parseWith } from '../../../shared/validation';

const SDP = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n';
const SETTINGS = { gatewayUrl: 'https://gateway.example.com/restapi/v1', relayUrl: 'https://relay.example.com', apiKey: 'k3y-0123456789' };

/** Valid payloads of every command. The Record type makes a new command fail to compile until it is listed here. */
const VALID: Record<CommandName, unknown[]> = {
  getSnapshot: [{}],
  startCall: [{ to: '+44 20 7946 0958' }, { to: '' }, { to: '0'.repeat(64) }],
  sendOffer: [{ localId: 'out-1', sdp: SDP }, { localId: 'x'.repeat(200), sdp: 'v'.repeat(64 * 1024) }],
  answerCall: [{ localId: 'in:wacid.1' }],
  acceptCall: [{ localId: 'in:wacid.1', sdp: SDP }],
  declineCall: [{ localId: 'in:wacid.1' }],
  hangUp: [{ localId: 'out-1' }],
  reportMedia: [
    { localId: 'in:wacid.1', state: 'connected' },
    { localId: 'in:wacid.1', state: 'failed', reason: 'ICE failed' },
    { localId: 'in:wacid.1', state: 'failed', reason: '' },
  ],
  saveSettings: [{ settings: SETTINGS }, { settings: { ...SETTINGS, apiKey: '', productSegment: 'acme', defaultCountry: 'GB' } }],
  clearSettings: [{}],
  simulateIncomingCall: [{ number: '442079460958' }],
  simulateCustomerHangUp: [{ localId: 'in:wacid.1' }],
  setPresence: [{ status: 'available' }, { status: 'dnd' }],
};

/** [payload, the field that must be named, words of the rule] for every command. */
const INVALID: Record<CommandName, [unknown, string, string?][]> = {
  getSnapshot: [
    [{ localId: 'x' }, '(root)', 'Unrecognized key: "localId"'],
    [null, '(root)'],
    [undefined, '(root)'],
  ],
  startCall: [
    [{}, 'to'],
    [{ to: 442079460958 }, 'to'],
    [{ to: '1'.repeat(65) }, 'to', 'is too long'],
    [{ to: '+442079460958', from: 'x' }, '(root)', 'Unrecognized key: "from"'],
  ],
  sendOffer: [
    [{ localId: 'out-1' }, 'sdp'],
    [{ localId: '', sdp: SDP }, 'localId', 'must not be empty'],
    [{ localId: 'x'.repeat(201), sdp: SDP }, 'localId', 'is too long'],
    [{ localId: 'out-1', sdp: '' }, 'sdp', 'must not be empty'],
    [{ localId: 'out-1', sdp: 'v'.repeat(64 * 1024 + 1) }, 'sdp', 'is too long (64 KiB at most)'],
    [{ localId: 'out-1', sdp: { type: 'offer', sdp: SDP } }, 'sdp'],
    [{ localId: 'out-1', sdp: SDP, type: 'offer' }, '(root)', 'Unrecognized key: "type"'],
  ],
  answerCall: [
    [{}, 'localId'],
    [{ localId: 7 }, 'localId'],
    [{ localId: 'in:1', sdp: SDP }, '(root)', 'Unrecognized key: "sdp"'],
  ],
  acceptCall: [
    [{ localId: 'in:1' }, 'sdp'],
    [{ sdp: SDP }, 'localId'],
    [{ localId: 'in:1', sdp: '' }, 'sdp', 'must not be empty'],
    [{ localId: 'in:1', sdp: SDP, callId: 'wacid.1' }, '(root)', 'Unrecognized key: "callId"'],
  ],
  declineCall: [
    [{ localId: '' }, 'localId', 'must not be empty'],
    [{ localId: 'in:1', reason: 'busy' }, '(root)', 'Unrecognized key: "reason"'],
  ],
  hangUp: [
    [{ localId: null }, 'localId'],
    [{ localId: 'x'.repeat(201) }, 'localId', 'is too long'],
    [{ localId: 'out-1', force: true }, '(root)', 'Unrecognized key: "force"'],
  ],
  reportMedia: [
    [{ localId: 'in:1' }, 'state'],
    [{ localId: 'in:1', state: 'connecting' }, 'state'],
    [{ localId: 'in:1', state: 'failed' }, 'reason'],
    [{ localId: 'in:1', state: 'failed', reason: 'r'.repeat(501) }, 'reason'],
    [{ localId: 'in:1', state: 'connected', reason: 'x' }, '(root)', 'Unrecognized key: "reason"'],
    [{ localId: '', state: 'connected' }, 'localId', 'must not be empty'],
  ],
  saveSettings: [
    [{}, 'settings'],
    [SETTINGS, 'settings', 'Unrecognized keys: "gatewayUrl"'], // the settings not wrapped
    [{ settings: { ...SETTINGS, gatewayUrl: 'https://gateway.example.com/restapi' } }, 'settings.gatewayUrl', 'must end in the version segment'],
    [{ settings: { ...SETTINGS, gatewayUrl: 'not a url' } }, 'settings.gatewayUrl', 'must be an http:// or https:// URL'],
    [{ settings: { ...SETTINGS, apiKey: 'short' } }, 'settings.apiKey', 'the API key must be at least 8 characters'],
    [{ settings: { ...SETTINGS, secretStorage: 'memory' } }, 'settings', 'Unrecognized key: "secretStorage"'],
  ],
  clearSettings: [
    [{ keepKey: true }, '(root)', 'Unrecognized key: "keepKey"'],
    ['all', '(root)'],
  ],
  simulateIncomingCall: [
    [{ number: '' }, 'number'],
    [{ number: '4'.repeat(65) }, 'number'],
    [{}, 'number'],
    [{ number: '442079460958', name: 'Ada' }, '(root)', 'Unrecognized key: "name"'],
  ],
  simulateCustomerHangUp: [
    [{ callId: 'wacid.1' }, 'localId'],
    [{ localId: 'in:1', callId: 'wacid.1' }, '(root)', 'Unrecognized key: "callId"'],
  ],
  setPresence: [
    [{}, 'status'],
    // "on_call" is not the agent's to choose: the service reports it while a call is under way.
    [{ status: 'on_call' }, 'status', 'must be one of available, dnd'],
    [{ status: 'away' }, 'status', 'must be one of available, dnd'],
    [{ status: 'dnd', until: 0 }, '(root)', 'Unrecognized key: "until"'],
  ],
};

describe('commandSchemas', () => {
  it('has a schema for every command and nothing else', () => {
    expect([...COMMAND_NAMES].sort()).toEqual(Object.keys(VALID).sort());
    expect(Object.keys(commandSchemas).sort()).toEqual(Object.keys(INVALID).sort());
    // Every command has a result type; this mapping fails to compile when one is missing.
    const results: Record<CommandName, keyof CommandResults> = Object.fromEntries(COMMAND_NAMES.map((n) => [n, n])) as Record<CommandName, CommandName>;
    expect(Object.keys(results)).toHaveLength(13);
  });

  describe.each(COMMAND_NAMES)('%s', (name) => {
    it.each(VALID[name].map((p) => [p]))('accepts %j', (payload) => {
      expect(parseWith(commandSchemas[name], payload).ok).toBe(true);
    });

    it.each(INVALID[name])('refuses %j, naming %s', (payload, field, rule) => {
      const result = parseWith(commandSchemas[name], payload);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error.code).toBe('invalid_input');
        expect(result.error.field).toBe(field);
        if (rule !== undefined) expect(result.error.message).toContain(rule);
      }
    });
  });

  it('hands the settings on parsed: trimmed, with the default product word', () => {
    const result = parseWith(commandSchemas.saveSettings, { settings: { ...SETTINGS, gatewayUrl: ` ${SETTINGS.gatewayUrl} ` } });
    expect(result).toEqual({ ok: true, value: { settings: { ...SETTINGS, productSegment: 'chatapp' } } });
  });
});

describe('wsClientFrameSchema', () => {
  it('accepts a frame for every command; params are checked by the command schema afterwards', () => {
    for (const [id, command] of COMMAND_NAMES.entries()) {
      const frame = { id, command, params: { anything: true } };
      expect(parseWith(wsClientFrameSchema, frame)).toEqual({ ok: true, value: frame });
    }
  });

  it.each([
    [{ id: -1, command: 'hangUp', params: {} }, 'id'],
    [{ id: 1.5, command: 'hangUp', params: {} }, 'id'],
    [{ id: '1', command: 'hangUp', params: {} }, 'id'],
    [{ command: 'hangUp', params: {} }, 'id'],
    [{ id: 1, command: 'hangup', params: {} }, 'command'],
    [{ id: 1, command: 'send', params: {} }, 'command'],
    [{ id: 1, params: {} }, 'command'],
    [{ id: 1, command: 'hangUp' }, 'params'],
    [{ id: 1, command: 'hangUp', params: {}, token: 'secret' }, '(root)'],
    [[1, 'hangUp', {}], '(root)'],
    ['{"id":1}', '(root)'],
  ])('refuses %j, naming %s', (frame, field) => {
    const result = parseWith(wsClientFrameSchema, frame);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.field).toBe(field);
  });
});

describe('pushes', () => {
  it('names one onX listener per push', () => {
    const expected: Record<PushName, keyof SoftphonePushes> = {
      callChanged: 'onCallChanged',
      connectionChanged: 'onConnectionChanged',
      historyChanged: 'onHistoryChanged',
      settingsChanged: 'onSettingsChanged',
      presenceChanged: 'onPresenceChanged',
    };
    for (const name of PUSH_NAMES) expect(pushListenerName(name)).toBe(expected[name]);
    expect([...PUSH_NAMES].sort()).toEqual(Object.keys(expected).sort());
  });

  it('lists every push payload', () => {
    const payloads: Record<PushName, true> = { callChanged: true, connectionChanged: true, historyChanged: true, settingsChanged: true, presenceChanged: true };
    expect([...PUSH_NAMES].sort()).toEqual(Object.keys(payloads).sort() as (keyof PushPayloads)[]);
  });
});
