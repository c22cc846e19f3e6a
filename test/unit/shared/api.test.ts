import { describe, expect, expectTypeOf, it } from 'vitest';
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
import { ANSWER_SDP, DIAL_OFFER_SDP } from '../../fixtures/sdp';
import type { RuleText, TextValue } from '../../../shared/i18n/text';

const VOICE_CALL = { type: 'voice_call', body: { text: 'Tap to call us' }, action: { name: 'voice_call', parameters: { display_text: 'Call us', ttl_minutes: 60, payload: '{"v":1}' } } };
const DRAFT = {
  name: 'order_update',
  languageCode: 'en_US',
  recipient: { raw: '<USER_PHONE_NUMBER>', placeholder: true },
  fields: [{ path: 'template.components[0].parameters[0].text', label: 'Body {{1}}', sample: '{{1}}', placeholder: true, kind: 'text' }],
  template: { name: 'order_update', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '{{1}}' }] }] },
};
const SETTINGS = { gatewayUrl: 'https://gateway.example.com/restapi/v1', relayUrl: 'https://relay.example.com', apiKey: 'k3y-0123456789' };

/** Valid payloads of every command. The Record type makes a new command fail to compile until it is listed here. */
const VALID: Record<CommandName, unknown[]> = {
  getSnapshot: [{}],
  startCall: [
    { localId: 'out:7f3a9c2e', to: '+44 20 7946 0958', sdp: DIAL_OFFER_SDP },
    { localId: `out:${'a'.repeat(100)}`, to: '', sdp: 'v'.repeat(64 * 1024) },
    { localId: 'out:0b4e5c1d-2f3a-4b5c-8d9e-0123456789ab', to: '0'.repeat(64), sdp: DIAL_OFFER_SDP },
    { localId: 'out:7f3a9c2e', to: '+44 20 5946 0958', sdp: DIAL_OFFER_SDP, anyway: true },
    { localId: 'out:7f3a9c2e', to: '+44 20 5946 0958', sdp: DIAL_OFFER_SDP, anyway: false },
  ],
  answerCall: [{ localId: 'in:wacid.1', sdp: ANSWER_SDP }, { localId: 'x'.repeat(200), sdp: 'v'.repeat(64 * 1024) }],
  declineCall: [{ localId: 'in:wacid.1' }],
  hangUp: [{ localId: 'out-1' }],
  holdCall: [{ localId: 'in:wacid.1' }],
  resumeCall: [{ localId: 'out-1' }],
  setMuted: [{ localId: 'in:wacid.1', muted: true }, { localId: 'out:1', muted: false }],
  ringAnswer: [
    { localId: 'in:wacid.1', sdp: ANSWER_SDP },
    { localId: 'in:wacid.1', sdp: ANSWER_SDP, legId: 'leg-7f3a9c2e' },
  ],
  rejoinCall: [
    { localId: 'in:wacid.1', legId: 'leg-7f3a9c2e', sdp: ANSWER_SDP },
    { localId: 'tr:7Kq2', legId: `a${'b'.repeat(127)}`, sdp: 'v'.repeat(64 * 1024) },
  ],
  transferCall: [
    { localId: 'in:wacid.1', to: 'bob', kind: 'transfer' },
    { localId: 'tr:7Kq2', to: 'available', kind: 'consult' },
    { localId: 'out:7f3a9c2e', to: 'a'.repeat(128), kind: 'consult' },
  ],
  cancelTransfer: [{ localId: 'in:wacid.1' }],
  completeTransfer: [{ localId: 'tr:7Kq2' }],
  addToCall: [{ localId: 'out-1' }],
  getTeam: [{}],
  reportMedia: [
    { localId: 'in:wacid.1', state: 'connected' },
    { localId: 'in:wacid.1', state: 'failed', reason: 'ICE failed' },
    { localId: 'in:wacid.1', state: 'failed', reason: '' },
  ],
  saveSettings: [{ settings: SETTINGS }, { settings: { ...SETTINGS, apiKey: '', productSegment: 'acme', defaultCountry: 'GB' } }],
  clearSettings: [{}],
  saveNetworkSettings: [
    { network: { servers: [], relayOnly: false } },
    { network: { servers: ['stun:stun.example.com:3478', 'turn:turn.example.com:443?transport=tcp', 'turns:turn.example.com:443'], turnUsername: 'agent-7', turnPassword: 'pw', relayOnly: true } },
    // A blank password keeps the stored one.
    { network: { servers: ['turn:turn.example.com'], turnUsername: 'agent-7', turnPassword: '', relayOnly: true } },
  ],
  getIceConfig: [{}],
  reportQuality: [
    { localId: 'in:wacid.1', summary: { samples: 0, avgMos: null, worstMos: null, worstLossPercent: null, warningsSeen: [] }, samples: [] },
    {
      localId: 'in:wacid.1',
      summary: { samples: 2, avgMos: 4.3, worstMos: 4.1, worstLossPercent: 2, warningsSeen: ['high-packet-loss'] },
      samples: [{ at: 1, rttMs: 40, jitterMs: 3, inboundLoss: 0.02, micMuted: false, packetsReceived: 50, bytesReceived: 4000, connected: true }],
      path: { localType: 'relay', remoteType: 'host', relayProtocol: 'tcp' },
      sdp: { local: { iceLite: false, codecs: [{ payload: 111, name: 'opus', rate: 48000, channels: 2 }], candidateCount: 1, candidateTransports: ['udp'], candidateTypes: ['relay'] } },
    },
  ],
  exportDiagnostics: [{}, { window: { userAgent: 'Mozilla/5.0', language: 'en-GB', hostKind: 'browser' } }],
  checkRelay: [{}],
  writeLogs: [{ records: [] }, { records: [{ t: '2026-11-25T10:00:00.000Z', level: 'warn', logger: 'media', msg: 'media stopped', fields: { localId: 'in:1' } }] }],
  simulateIncomingCall: [{ number: '442079460958' }],
  simulateCustomerHangUp: [{ localId: 'in:wacid.1' }],
  setPresence: [{ status: 'available' }, { status: 'dnd' }, { status: 'break', reason: 'Lunch' }, { status: 'break', reason: 'x'.repeat(60) }],
  endAfterCallWork: [{}],
  getWallboard: [{}],
  saveWrapUp: [
    { localId: 'in:wacid.1', disposition: 'Sale', notes: '' },
    { localId: 'in:wacid.1', disposition: null, notes: 'n'.repeat(2000) },
  ],
  getVoicemail: [{ callId: 'wacid.1' }, { callId: 'wacid.1', mediaId: 'media-1' }, { callId: 'c'.repeat(512), mediaId: 'm'.repeat(512) }],
  takeCallback: [{ id: 'wacid.1' }, { id: 'i'.repeat(512) }],
  setRecording: [{ localId: 'in:wacid.1', recording: true }, { localId: 'tr:7Kq2', recording: false }],
  getRecording: [{ localId: 'in:wacid.1' }, { localId: 'out:1' }],
  getLiveCalls: [{}],
  startMonitor: [{ callId: 'wacid.1', mode: 'listen' }, { callId: 'c'.repeat(512), mode: 'whisper' }, { callId: 'wacid.1', mode: 'barge' }],
  answerMonitor: [{ callId: 'wacid.1', legId: 'leg-7f3a9c2e', sdp: ANSWER_SDP }, { callId: 'wacid.1', legId: `a${'b'.repeat(127)}`, sdp: 'v'.repeat(64 * 1024) }],
  leaveMonitor: [{ callId: 'wacid.1' }, { callId: 'c'.repeat(512) }],
  saveServiceCapture: [
    { serviceCapture: { record: false, transcribe: false, purpose: '', language: 'en_US' } },
    { serviceCapture: { record: true, transcribe: true, purpose: 'p'.repeat(250), language: 'pt_BR' } },
    { serviceCapture: { record: false, transcribe: true, purpose: 'Quality', language: 'ar' } },
  ],
  getServiceRecording: [{ localId: 'in:wacid.1' }, { localId: 'out:1' }],
  getTranscript: [{ localId: 'in:wacid.1' }],
  simulateVoicemail: [{ number: '12025550101' }],
  simulateCallbackRequest: [{ number: '12025550101' }, { number: 'n'.repeat(64) }],
  setPreferences: [
    { preferences: {} },
    { preferences: { audio: { speaker: { id: 'abc', label: 'Headset' }, ringer: null }, quitOnClose: true, shortcuts: { mute: 'Ctrl+Alt+M' }, missedSeenAt: 1 } },
  ],
  sendMessage: [
    { to: '+44 20 7946 0958', content: { type: 'text', text: { body: 'Hello' } } },
    { to: '442079460958', content: { type: 'text', text: { body: 'See https://example.com', preview_url: true } } },
    { to: '442079460958', content: { type: 'image', image: { link: 'https://example.com/a.png', caption: 'Your parcel' } } },
    { to: '442079460958', content: { type: 'audio', audio: { id: 'media-1' } } },
    // "Send anyway": the warnings the agent was shown and confirmed, as texts.
    { to: '442079460958', content: { type: 'video', video: { link: 'https://example.com/clip.mp4' } }, confirmed: ['H.264 High profile with B-frames does not play on Android'] },
    { to: '442079460958', content: { type: 'video', video: { link: 'https://example.com/clip.mp4' } }, confirmed: [] },
    { to: '442079460958', content: { type: 'video', video: { link: 'https://example.com/clip.mp4' } }, confirmed: Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(1000, 'w')) },
    { to: '442079460958', content: { type: 'document', document: { link: 'https://example.com/i.pdf', filename: 'invoice.pdf', caption: 'Invoice' } } },
    { to: '442079460958', content: { type: 'interactive', interactive: VOICE_CALL } },
    {
      to: '442079460958',
      content: {
        type: 'interactive',
        interactive: {
          type: 'list',
          body: { text: 'Pick a slot' },
          action: { button: 'Slots', sections: [{ title: 'Mon', rows: [{ id: 'r1', title: '9:00' }] }, { title: 'Tue', rows: [{ id: 'r2', title: '10:00', description: 'Room 2' }] }] },
        },
      },
    },
    {
      to: '442079460958',
      content: {
        type: 'interactive',
        interactive: { type: 'cta_url', header: { type: 'image', image: { link: 'https://example.com/h.png' } }, body: { text: 'Pay here' }, action: { name: 'cta_url', parameters: { display_text: 'Pay', url: 'https://example.com/pay' } } },
      },
    },
  ],
  checkMediaLink: [
    { type: 'image', link: 'https://example.com/a.png' },
    { type: 'document', link: 'x' }, // the link's own rules are the check's business, with a clear answer
  ],
  parseTemplate: [{ pasted: '' }, { pasted: '{"template":{}}' }],
  sendTemplate: [{ draft: DRAFT, to: '+1 202 555 0103', values: { 'template.components[0].parameters[0].text': 'Ada' } }, { draft: { ...DRAFT, fields: [] }, to: '12025550103', values: {} }],
  sendCallButton: [{ to: '12025550101' }, { to: '+1 202 555 0101', bodyText: 'Tap to call', displayText: 'Call us', ttlMinutes: 43_200 }, { to: '1', ttlMinutes: 1 }],
  requestCallPermission: [{ to: '12025550101' }, { to: '12025550101', bodyText: 'May we call you?' }],
  getConversation: [{ contact: '12025550101' }, { contact: '+44 20 7946 0958' }],
  simulateInboundMessage: [{ number: '12025550101', text: 'Hi' }],
  simulatePressCallButton: [{ number: '12025550101' }],
  getUpdateSettings: [{}],
  setUpdateSettings: [
    { settings: { feedUrl: '', channel: 'stable' } },
    { settings: { feedUrl: 'https://updates.example.com/softphone/', channel: 'beta' } },
    { settings: { feedUrl: 'http://127.0.0.1:8080/feed', channel: 'stable' } },
    { settings: { feedUrl: '  https://updates.example.com  ', channel: 'stable' } },
  ],
  checkForUpdates: [{}],
  restartToUpdate: [{}],
};

/** [payload, the field that must be named, words of the rule] for every command. */
const INVALID: Record<CommandName, [unknown, string, string?][]> = {
  getSnapshot: [
    [{ localId: 'x' }, '(root)', 'Unrecognized key: "localId"'],
    [null, '(root)'],
    [undefined, '(root)'],
  ],
  startCall: [
    [{ localId: 'out:7f3a9c2e', sdp: DIAL_OFFER_SDP }, 'to'],
    [{ localId: 'out:7f3a9c2e', to: 442079460958, sdp: DIAL_OFFER_SDP }, 'to'],
    [{ localId: 'out:7f3a9c2e', to: '1'.repeat(65), sdp: DIAL_OFFER_SDP }, 'to', 'is too long'],
    [{ localId: 'out:7f3a9c2e', to: '+442079460958', sdp: DIAL_OFFER_SDP, from: 'x' }, '(root)', 'Unrecognized key: "from"'],
    [{ localId: 'out:7f3a9c2e', to: '+442059460958', sdp: DIAL_OFFER_SDP, anyway: 'yes' }, 'anyway', 'must be true or false'],
    [{ localId: 'out:7f3a9c2e', to: '+442059460958', sdp: DIAL_OFFER_SDP, anyway: 1 }, 'anyway', 'must be true or false'],
    [{ localId: 'out:7f3a9c2e', to: '+442079460958' }, 'sdp'],
    [{ localId: 'out:7f3a9c2e', to: '+442079460958', sdp: '' }, 'sdp', 'must not be empty'],
    [{ localId: 'out:7f3a9c2e', to: '+442079460958', sdp: 'v'.repeat(64 * 1024 + 1) }, 'sdp', 'is too long (64 KiB at most)'],
    [{ localId: 'out:7f3a9c2e', to: '+442079460958', sdp: { type: 'offer', sdp: DIAL_OFFER_SDP } }, 'sdp'],
    [{ to: '+442079460958', sdp: DIAL_OFFER_SDP }, 'localId'],
    [{ localId: 'in:wacid.1', to: '+442079460958', sdp: DIAL_OFFER_SDP }, 'localId', 'must be "out:" followed by 8 to 100 letters, digits or dashes'],
    [{ localId: 'out:short', to: '+442079460958', sdp: DIAL_OFFER_SDP }, 'localId', 'must be "out:" followed by 8 to 100 letters, digits or dashes'],
    [{ localId: `out:${'a'.repeat(101)}`, to: '+442079460958', sdp: DIAL_OFFER_SDP }, 'localId', 'must be "out:" followed by 8 to 100 letters, digits or dashes'],
  ],
  answerCall: [
    [{ localId: 'in:1' }, 'sdp'],
    [{ sdp: ANSWER_SDP }, 'localId'],
    [{ localId: 7, sdp: ANSWER_SDP }, 'localId'],
    [{ localId: '', sdp: ANSWER_SDP }, 'localId', 'must not be empty'],
    [{ localId: 'x'.repeat(201), sdp: ANSWER_SDP }, 'localId', 'is too long'],
    [{ localId: 'in:1', sdp: '' }, 'sdp', 'must not be empty'],
    [{ localId: 'in:1', sdp: 'v'.repeat(64 * 1024 + 1) }, 'sdp', 'is too long (64 KiB at most)'],
    [{ localId: 'in:1', sdp: ANSWER_SDP, callId: 'wacid.1' }, '(root)', 'Unrecognized key: "callId"'],
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
  holdCall: [
    [{}, 'localId'],
    [{ localId: 'in:1', music: 'jazz' }, '(root)', 'Unrecognized key: "music"'],
  ],
  resumeCall: [
    [{ localId: 7 }, 'localId'],
    [{ localId: '' }, 'localId', 'must not be empty'],
  ],
  setMuted: [
    [{ muted: true }, 'localId'],
    [{ localId: 'in:wacid.1' }, 'muted', 'must be true or false'],
    [{ localId: 'in:wacid.1', muted: 'on' }, 'muted', 'must be true or false'],
    [{ localId: 'in:wacid.1', muted: true, held: true }, '(root)', 'Unrecognized key: "held"'],
  ],
  ringAnswer: [
    [{ localId: 'in:wacid.1' }, 'sdp'],
    [{ localId: 'in:wacid.1', sdp: '' }, 'sdp', 'must not be empty'],
    [{ localId: 'in:wacid.1', sdp: ANSWER_SDP, legId: 'leg 1' }, 'legId', 'must be 1 to 128 letters, digits'],
    [{ sdp: ANSWER_SDP }, 'localId'],
  ],
  rejoinCall: [
    [{ localId: 'in:wacid.1', sdp: ANSWER_SDP }, 'legId'],
    [{ localId: 'in:wacid.1', legId: '', sdp: ANSWER_SDP }, 'legId', 'must be 1 to 128 letters, digits'],
    [{ localId: 'in:wacid.1', legId: 'leg 1', sdp: ANSWER_SDP }, 'legId', 'must be 1 to 128 letters, digits'],
    [{ localId: 'in:wacid.1', legId: `a${'b'.repeat(128)}`, sdp: ANSWER_SDP }, 'legId', 'must be 1 to 128 letters, digits'],
    [{ localId: 'in:wacid.1', legId: 'leg-1' }, 'sdp'],
    [{ localId: 'in:wacid.1', legId: 'leg-1', sdp: '' }, 'sdp', 'must not be empty'],
    [{ legId: 'leg-1', sdp: ANSWER_SDP }, 'localId'],
    [{ localId: 'in:wacid.1', legId: 'leg-1', sdp: ANSWER_SDP, callId: 'wacid.1' }, '(root)', 'Unrecognized key: "callId"'],
  ],
  transferCall: [
    [{ localId: 'in:1', kind: 'transfer' }, 'to'],
    [{ localId: 'in:1', to: '', kind: 'transfer' }, 'to', 'must not be empty'],
    [{ localId: 'in:1', to: 'a'.repeat(129), kind: 'transfer' }, 'to', 'is too long'],
    [{ localId: 'in:1', to: 'bob' }, 'kind'],
    [{ localId: 'in:1', to: 'bob', kind: 'park' }, 'kind', 'must be one of transfer, consult'],
    [{ to: 'bob', kind: 'consult' }, 'localId'],
    [{ localId: 'in:1', to: 'bob', kind: 'consult', transferId: 't-1' }, '(root)', 'Unrecognized key: "transferId"'],
  ],
  cancelTransfer: [
    [{}, 'localId'],
    [{ localId: 'in:1', transferId: 't-1' }, '(root)', 'Unrecognized key: "transferId"'],
  ],
  completeTransfer: [[{ localId: '' }, 'localId', 'must not be empty']],
  addToCall: [[{ localId: 'x'.repeat(201) }, 'localId', 'is too long']],
  getTeam: [[{ all: true }, '(root)', 'Unrecognized key: "all"']],
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
  saveNetworkSettings: [
    [{}, 'network'],
    [{ servers: [], relayOnly: false }, 'network', '(root): Unrecognized keys: "servers", "relayOnly"'], // the section not wrapped
    [{ network: { servers: ['stun:stun.example.com?transport=udp'], relayOnly: false } }, 'network.servers[0]', 'must be stun:HOST[:PORT], turn:HOST[:PORT] or turns:HOST[:PORT]'],
    [{ network: { servers: 'stun:stun.example.com', relayOnly: false } }, 'network.servers', 'must be a list of server URLs'],
    [{ network: { servers: [], relayOnly: 'yes' } }, 'network.relayOnly', 'must be true or false'],
    [{ network: { servers: [], relayOnly: false, turnPassword: 'p'.repeat(513) } }, 'network.turnPassword', 'the TURN password is too long (512 characters at most)'],
    [{ network: { servers: [], relayOnly: false, hasTurnPassword: true } }, 'network', 'Unrecognized key: "hasTurnPassword"'],
  ],
  getIceConfig: [
    [{ refresh: true }, '(root)', 'Unrecognized key: "refresh"'],
    [null, '(root)'],
  ],
  reportQuality: [
    [{ localId: 'in:wacid.1', samples: [] }, 'summary'],
    [{ localId: 'in:wacid.1', summary: { samples: 1, avgMos: 9, worstMos: null, worstLossPercent: null, warningsSeen: [] }, samples: [] }, 'summary.avgMos'],
    [{ localId: 'in:wacid.1', summary: { samples: 0, avgMos: null, worstMos: null, worstLossPercent: null, warningsSeen: [] }, samples: [], path: { localType: 'satellite', remoteType: 'host' } }, 'path.localType', 'must be host, srflx, prflx or relay'],
  ],
  exportDiagnostics: [
    [{ window: { userAgent: 'x'.repeat(513), language: 'en', hostKind: 'browser' } }, 'window.userAgent', 'is too long'],
    [{ window: { userAgent: 'x', language: 'en', hostKind: 'kiosk' } }, 'window.hostKind'],
  ],
  checkRelay: [[{ deep: true }, '(root)', 'Unrecognized key: "deep"']],
  writeLogs: [
    [{ records: [{ t: 'x', level: 'loud', logger: 'media', msg: 'm' }] }, 'records[0].level', 'must be debug, info, warn or error'],
    [{ records: [{ t: 'x', level: 'info', logger: 'media', msg: 'm', fields: { blob: 'x'.repeat(5000) } }] }, 'records[0].fields', 'must be at most 4096 characters as JSON'],
    [{ records: 'everything' }, 'records', 'must be a list of log records'],
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
  setPreferences: [
    [{}, 'preferences', 'expected object'],
    [{ preferences: { quitOnClose: 'yes' } }, 'preferences.quitOnClose', 'must be true or false'],
    [{ preferences: { audio: { speaker: { id: 'x' } } } }, 'preferences.audio.speaker.label'],
    [{ preferences: { colour: 'red' } }, 'preferences', 'Unrecognized key: "colour"'],
    [{ preferences: { missedSeenAt: -1 } }, 'preferences.missedSeenAt'],
  ],
  setPresence: [
    [{}, 'status'],
    // "on_call" is not the agent's to choose: the service reports it while a call is under way.
    [{ status: 'on_call' }, 'status', 'must be one of available, break, dnd'],
    [{ status: 'after_call_work' }, 'status', 'must be one of available, break, dnd'],
    [{ status: 'away' }, 'status', 'must be one of available, break, dnd'],
    [{ status: 'dnd', until: 0 }, '(root)', 'Unrecognized key: "until"'],
    [{ status: 'break', reason: '' }, 'reason', 'must not be empty'],
    [{ status: 'break', reason: 'x'.repeat(61) }, 'reason', 'must be at most 60 characters'],
  ],
  endAfterCallWork: [[{ now: true }, '(root)', 'Unrecognized key: "now"']],
  getWallboard: [[{ day: '2026-11-02' }, '(root)', 'Unrecognized key: "day"']],
  saveWrapUp: [
    [{ localId: 'in:wacid.1', notes: '' }, 'disposition'],
    [{ localId: 'in:wacid.1', disposition: '', notes: '' }, 'disposition', 'must not be empty'],
    [{ localId: 'in:wacid.1', disposition: null, notes: 'n'.repeat(2001) }, 'notes', 'must be at most 2000 characters'],
    [{ localId: 'in:wacid.1', disposition: null }, 'notes'],
    [{ disposition: null, notes: '' }, 'localId'],
  ],
  getVoicemail: [
    [{}, 'callId'],
    [{ callId: '' }, 'callId'],
    [{ callId: 'c'.repeat(513) }, 'callId'],
    [{ callId: 'wacid.1', mediaId: '' }, 'mediaId'],
    [{ callId: 'wacid.1', mediaId: 'm'.repeat(513) }, 'mediaId'],
    [{ callId: 'wacid.1', localId: 'in:wacid.1' }, '(root)', 'Unrecognized key: "localId"'],
  ],
  saveServiceCapture: [
    [{}, 'serviceCapture'],
    [{ serviceCapture: { record: true, transcribe: false, purpose: '', language: 'en_US' } }, 'serviceCapture.purpose'],
    [{ serviceCapture: { record: false, transcribe: true, purpose: '   ', language: 'en_US' } }, 'serviceCapture.purpose'],
    [{ serviceCapture: { record: true, transcribe: false, purpose: 'p'.repeat(251), language: 'en_US' } }, 'serviceCapture.purpose', '250'],
    [{ serviceCapture: { record: true, transcribe: false, purpose: 'Quality', language: 'fr_FR' } }, 'serviceCapture.language'],
    [{ serviceCapture: { record: 'yes', transcribe: false, purpose: 'Quality', language: 'en_US' } }, 'serviceCapture.record'],
    [{ serviceCapture: { record: true, transcribe: false, purpose: 'Quality', language: 'en_US', announce: true } }, 'serviceCapture', 'Unrecognized key: "announce"'],
  ],
  getServiceRecording: [
    [{}, 'localId'],
    [{ localId: 'in:wacid.1', mediaId: 'media-1' }, '(root)', 'Unrecognized key: "mediaId"'],
  ],
  getTranscript: [
    [{}, 'localId'],
    [{ callId: 'wacid.1' }, 'localId'],
  ],
  setRecording: [
    [{}, 'localId'],
    [{ localId: 'in:wacid.1' }, 'recording', 'must be true or false'],
    [{ localId: 'in:wacid.1', recording: 'yes' }, 'recording', 'must be true or false'],
    [{ localId: 'in:wacid.1', recording: true, callId: 'wacid.1' }, '(root)', 'Unrecognized key: "callId"'],
  ],
  getRecording: [
    [{}, 'localId'],
    [{ localId: 'in:wacid.1', callId: 'wacid.1' }, '(root)', 'Unrecognized key: "callId"'],
  ],
  getLiveCalls: [[{ all: true }, '(root)', 'Unrecognized key: "all"']],
  startMonitor: [
    [{ mode: 'listen' }, 'callId'],
    [{ callId: '', mode: 'listen' }, 'callId'],
    [{ callId: 'c'.repeat(513), mode: 'listen' }, 'callId'],
    [{ callId: 'wacid.1' }, 'mode', 'must be one of listen, whisper, barge'],
    [{ callId: 'wacid.1', mode: 'left' }, 'mode', 'must be one of listen, whisper, barge'],
    [{ callId: 'wacid.1', mode: 'listen', legId: 'leg-1' }, '(root)', 'Unrecognized key: "legId"'],
  ],
  answerMonitor: [
    [{ legId: 'leg-1', sdp: ANSWER_SDP }, 'callId'],
    [{ callId: 'wacid.1', sdp: ANSWER_SDP }, 'legId'],
    [{ callId: 'wacid.1', legId: 'leg 1', sdp: ANSWER_SDP }, 'legId', 'must be 1 to 128 letters, digits'],
    [{ callId: 'wacid.1', legId: 'leg-1' }, 'sdp'],
    [{ callId: 'wacid.1', legId: 'leg-1', sdp: 'v'.repeat(64 * 1024 + 1) }, 'sdp'],
  ],
  leaveMonitor: [
    [{}, 'callId'],
    [{ callId: '' }, 'callId'],
    [{ callId: 'wacid.1', mode: 'listen' }, '(root)', 'Unrecognized key: "mode"'],
  ],
  takeCallback: [
    [{}, 'id'],
    [{ id: '' }, 'id'],
    [{ id: 'i'.repeat(513) }, 'id'],
    [{ id: 'wacid.1', agentId: 'bob' }, '(root)', 'Unrecognized key: "agentId"'],
  ],
  simulateVoicemail: [
    [{}, 'number'],
    [{ number: '' }, 'number'],
    [{ number: 'n'.repeat(65) }, 'number'],
    [{ number: '12025550101', callId: 'wacid.1' }, '(root)', 'Unrecognized key: "callId"'],
  ],
  simulateCallbackRequest: [
    [{}, 'number'],
    [{ number: '' }, 'number'],
    [{ number: '12025550101', permanent: true }, '(root)', 'Unrecognized key: "permanent"'],
  ],
  sendMessage: [
    [{ content: { type: 'text', text: { body: 'Hi' } } }, 'to', 'is required'],
    [{ to: '', content: { type: 'text', text: { body: 'Hi' } } }, 'to', 'must not be empty'],
    [{ to: '12025550101' }, 'content'],
    [{ to: '12025550101', content: { type: 'text', text: { body: '   ' } } }, 'content.text.body', 'must not be empty'],
    [{ to: '12025550101', content: { type: 'text', text: { body: 'x'.repeat(4097) } } }, 'content.text.body', 'must be at most 4096 characters'],
    // The envelope is the service's: a composer cannot smuggle in another recipient.
    [{ to: '12025550101', content: { type: 'text', text: { body: 'Hi' }, to: '12025550199' } }, 'content', 'does not take "to"'],
    [{ to: '12025550101', content: { type: 'template', template: {} } }, 'content.type', 'templates go through sendTemplate'],
    [{ to: '12025550101', content: { type: 'image', image: { link: 'https://e.com/a.png', id: 'm1' } } }, 'content.image.link', 'exactly one of id and link'],
    [{ to: '12025550101', content: { type: 'audio', audio: { link: 'https://e.com/a.mp3', caption: 'x' } } }, 'content.audio.caption', 'only image, video and document take a caption'],
    [{ to: '12025550101', content: { type: 'image', image: { link: 'https://e.com/a.png', filename: 'a.png' } } }, 'content.image.filename', 'only document takes a filename'],
    [{ to: '12025550101', content: { type: 'video', video: { link: 'ftp://e.com/a.mp4' } } }, 'content.video.link', 'http:// or https://'],
    // The bare flag is gone: only the warnings' texts confirm anything.
    [{ to: '12025550101', content: { type: 'video', video: { link: 'https://e.com/a.mp4' } }, anyway: true }, '(root)', 'Unrecognized key: "anyway"'],
    [{ to: '12025550101', content: { type: 'video', video: { link: 'https://e.com/a.mp4' } }, confirmed: true }, 'confirmed', 'must be a list of the warnings the agent confirmed'],
    [{ to: '12025550101', content: { type: 'video', video: { link: 'https://e.com/a.mp4' } }, confirmed: 'B-frames' }, 'confirmed', 'must be a list of the warnings the agent confirmed'],
    [{ to: '12025550101', content: { type: 'video', video: { link: 'https://e.com/a.mp4' } }, confirmed: ['B-frames', 7] }, 'confirmed[1]', 'must hold the warnings as texts'],
    [{ to: '12025550101', content: { type: 'video', video: { link: 'https://e.com/a.mp4' } }, confirmed: [''] }, 'confirmed[0]', 'must not hold an empty warning'],
    [{ to: '12025550101', content: { type: 'video', video: { link: 'https://e.com/a.mp4' } }, confirmed: ['w'.repeat(1001)] }, 'confirmed[0]', 'at most 1000 characters each'],
    [{ to: '12025550101', content: { type: 'video', video: { link: 'https://e.com/a.mp4' } }, confirmed: Array.from({ length: 21 }, (_, i) => `warning ${i}`) }, 'confirmed', 'must list at most 20 warnings'],
    [
      { to: '12025550101', content: { type: 'interactive', interactive: { ...VOICE_CALL, action: { name: 'voice_call', parameters: { display_text: 'x'.repeat(21), ttl_minutes: 60, payload: '' } } } } },
      'content.interactive.action.parameters.display_text',
      'must be at most 20 characters',
    ],
    [
      { to: '12025550101', content: { type: 'interactive', interactive: { ...VOICE_CALL, action: { name: 'voice_call', parameters: { display_text: 'Call', ttl_minutes: 43_201, payload: '' } } } } },
      'content.interactive.action.parameters.ttl_minutes',
      'must be at most 43200 minutes',
    ],
    [
      {
        to: '12025550101',
        content: {
          type: 'interactive',
          interactive: { type: 'flow', body: { text: 'Book' }, action: { name: 'flow', parameters: { flow_message_version: '3', flow_name: 'a', flow_id: '1', flow_cta: 'Go' } } },
        },
      },
      'content.interactive.action.parameters.flow_id',
      'exactly one of flow_name and flow_id',
    ],
  ],
  checkMediaLink: [
    [{ type: 'sticker', link: 'https://e.com/a.webp' }, 'type', 'must be one of image, audio, video, document'],
    [{ type: 'image' }, 'link', 'is required'],
    [{ type: 'image', link: '' }, 'link', 'must not be empty'],
    [{ type: 'image', link: `https://e.com/${'a'.repeat(2048)}` }, 'link', 'is too long'],
  ],
  parseTemplate: [
    [{}, 'pasted', 'is required'],
    [{ pasted: 'x'.repeat(128 * 1024 + 1) }, 'pasted', 'is too long'],
    [{ pasted: '{}', to: '1' }, '(root)', 'Unrecognized key: "to"'],
  ],
  sendTemplate: [
    [{ draft: DRAFT, values: {} }, 'to', 'is required'],
    [{ draft: { ...DRAFT, template: { language: { code: 'en' } } }, to: '1', values: {} }, 'draft.template.name', 'the template\u2019s name'],
    [{ draft: DRAFT, to: '1', values: { x: 'y'.repeat(4097) } }, 'values.x', 'is too long'],
    [{ draft: { ...DRAFT, fields: [{ ...DRAFT.fields[0], kind: 'sticker' }] }, to: '1', values: {} }, 'draft.fields[0].kind'],
  ],
  sendCallButton: [
    [{}, 'to', 'is required'],
    [{ to: '1', displayText: 'x'.repeat(21) }, 'displayText', 'must be at most 20 characters'],
    [{ to: '1', ttlMinutes: 0 }, 'ttlMinutes', 'must be at least 1 minute'],
    [{ to: '1', ttlMinutes: 43_201 }, 'ttlMinutes', 'must be at most 43200 minutes'],
    [{ to: '1', ttlMinutes: 1.5 }, 'ttlMinutes', 'must be a whole number of minutes'],
    [{ to: '1', ttlMinutes: '60' }, 'ttlMinutes', 'must be a number of minutes'],
    // The payload is the service's to write: it routes the call back to this agent.
    [{ to: '1', payload: '{"v":1,"agentId":"bob"}' }, '(root)', 'Unrecognized key: "payload"'],
  ],
  requestCallPermission: [
    [{ to: '' }, 'to', 'must not be empty'],
    [{ to: '1', bodyText: 'x'.repeat(1025) }, 'bodyText', 'must be at most 1024 characters'],
  ],
  getConversation: [
    [{}, 'contact', 'is required'],
    [{ contact: '1'.repeat(65) }, 'contact', 'is too long'],
  ],
  simulateInboundMessage: [
    [{ number: '12025550101' }, 'text', 'is required'],
    [{ number: '12025550101', text: '' }, 'text', 'must not be empty'],
    [{ text: 'Hi' }, 'number'],
  ],
  simulatePressCallButton: [
    [{}, 'number'],
    [{ number: '12025550101', payload: 'x' }, '(root)', 'Unrecognized key: "payload"'],
  ],
  getUpdateSettings: [[{ feedUrl: '' }, '(root)', 'Unrecognized key: "feedUrl"']],
  setUpdateSettings: [
    [{}, 'settings'],
    [{ settings: { feedUrl: 'ftp://updates.example.com', channel: 'stable' } }, 'settings.feedUrl', 'must be an https:// address'],
    [{ settings: { feedUrl: 'http://updates.example.com/feed', channel: 'stable' } }, 'settings.feedUrl', 'plain http:// would let anyone'],
    [{ settings: { feedUrl: 'https://user:secret@updates.example.com/', channel: 'stable' } }, 'settings.feedUrl', 'must not contain a user name or password'],
    [{ settings: { feedUrl: 'https://updates.example.com/feed?token=1', channel: 'stable' } }, 'settings.feedUrl', 'must not have a query'],
    [{ settings: { feedUrl: 'not a url', channel: 'stable' } }, 'settings.feedUrl', 'must be an https:// address'],
    [{ settings: { feedUrl: 42, channel: 'stable' } }, 'settings.feedUrl', 'must be a string'],
    [{ settings: { feedUrl: '', channel: 'nightly' } }, 'settings.channel', 'must be one of stable, beta'],
    [{ settings: { feedUrl: '' } }, 'settings.channel'],
  ],
  checkForUpdates: [[{ force: true }, '(root)', 'Unrecognized key: "force"']],
  restartToUpdate: [[{ now: true }, '(root)', 'Unrecognized key: "now"']],
};

describe('commandSchemas', () => {
  it('has a schema for every command and nothing else', () => {
    expect([...COMMAND_NAMES].sort()).toEqual(Object.keys(VALID).sort());
    expect(Object.keys(commandSchemas).sort()).toEqual(Object.keys(INVALID).sort());
    // Every command has a result type; this mapping fails to compile when one is missing.
    const results: Record<CommandName, keyof CommandResults> = Object.fromEntries(COMMAND_NAMES.map((n) => [n, n])) as Record<CommandName, CommandName>;
    expect(Object.keys(results)).toHaveLength(57);
  });

  it("checkMediaLink's result: the names the composer reads (warnings, confirm) and what the file is in words, each with its codes and values", () => {
    // Checked by the type checker (npm run typecheck): a renamed or dropped member fails it.
    expectTypeOf<CommandResults['checkMediaLink']>().toEqualTypeOf<{
      contentType: string;
      contentLength?: number;
      finalUrl: string;
      warnings: string[];
      warningTexts?: RuleText[];
      confirm?: string[];
      confirmTexts?: RuleText[];
      description?: string;
      descriptionText?: TextValue;
    }>();
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
      teamChanged: 'onTeamChanged',
      conversationChanged: 'onConversationChanged',
      preferencesChanged: 'onPreferencesChanged',
      dialRequested: 'onDialRequested',
      shortcutPressed: 'onShortcutPressed',
      shortcutsRefused: 'onShortcutsRefused',
      updateStatus: 'onUpdateStatus',
      customerLegQuality: 'onCustomerLegQuality',
      monitorChanged: 'onMonitorChanged',
    };
    for (const name of PUSH_NAMES) expect(pushListenerName(name)).toBe(expected[name]);
    expect([...PUSH_NAMES].sort()).toEqual(Object.keys(expected).sort());
  });

  it('lists every push payload', () => {
    const payloads: Record<PushName, true> = {
      callChanged: true,
      connectionChanged: true,
      historyChanged: true,
      settingsChanged: true,
      presenceChanged: true,
      teamChanged: true,
      conversationChanged: true,
      preferencesChanged: true,
      dialRequested: true,
      shortcutPressed: true,
      shortcutsRefused: true,
      updateStatus: true,
      customerLegQuality: true,
      monitorChanged: true,
    };
    expect([...PUSH_NAMES].sort()).toEqual(Object.keys(payloads).sort() as (keyof PushPayloads)[]);
  });
});
