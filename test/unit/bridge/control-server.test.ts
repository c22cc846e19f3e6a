// The node's control API over real HTTP (bridge/control-server.ts): every path of
// BRIDGE_CONTROL_PATHS reaches its BridgeControl method with its ids and body, the bridge token is
// required, bodies and ids are checked naming the field, and a Result's error comes back with the
// status its code stands for.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startControlServer, type ControlServer } from '../../../bridge/control-server';
import { BRIDGE_CONTROL_PATHS } from '../../../shared/bridge';
import { RECORDING_CONTROL_PATHS } from '../../../shared/bridge-recording';
import { err } from '../../../shared/result';
import { BRIDGE_TOKEN, RecordingLogger, REPORT, ScriptedControl } from './control-fixtures';

let control: ScriptedControl;
let logger: RecordingLogger;
let server: ControlServer;

beforeEach(async () => {
  control = new ScriptedControl();
  logger = new RecordingLogger();
  server = await startControlServer({ control, bridgeToken: BRIDGE_TOKEN, logger });
});
afterEach(async () => {
  await server.close();
});

async function send(method: string, path: string, body?: unknown, token: string | null = BRIDGE_TOKEN) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, body: json, headers: res.headers };
}

describe('bridge control API: each path reaches its method', () => {
  it('hands every action its ids and body, and answers its value (200) or nothing (204)', async () => {
    const routes = { customer: ['leg-1'], 'leg-1': ['customer', 'music'] };
    const cases: Array<[string, string, unknown, number, unknown]> = [
      ['POST', BRIDGE_CONTROL_PATHS.incoming('wacid.1'), { sdp: 'v=0 offer' }, 200, { answer: 'answer to v=0 offer' }],
      ['POST', BRIDGE_CONTROL_PATHS.connect('wacid.1'), undefined, 204, undefined],
      ['POST', BRIDGE_CONTROL_PATHS.outgoing('ref-1'), undefined, 200, { offer: 'offer for ref-1' }],
      ['POST', BRIDGE_CONTROL_PATHS.bind('ref-1'), { callId: 'wacid.2' }, 204, undefined],
      ['POST', BRIDGE_CONTROL_PATHS.customerAnswer('wacid.2'), { sdp: 'v=0 customer' }, 204, undefined],
      ['POST', BRIDGE_CONTROL_PATHS.legOffer('wacid.1', 'leg-1'), undefined, 200, { offer: 'offer for leg-1' }],
      ['POST', BRIDGE_CONTROL_PATHS.legAnswer('wacid.1', 'leg-1'), { sdp: 'v=0 window' }, 204, undefined],
      ['POST', BRIDGE_CONTROL_PATHS.legFromOffer('wacid.2', 'leg-2'), { sdp: 'v=0 window offer' }, 200, { answer: 'answer to v=0 window offer' }],
      ['POST', BRIDGE_CONTROL_PATHS.routes('wacid.1'), { routes }, 204, undefined],
      ['DELETE', BRIDGE_CONTROL_PATHS.leg('wacid.1', 'leg-1'), undefined, 204, undefined],
      ['GET', BRIDGE_CONTROL_PATHS.call('wacid.1'), undefined, 200, REPORT],
      ['DELETE', BRIDGE_CONTROL_PATHS.call('wacid.1'), undefined, 204, undefined],
    ];
    for (const [method, path, body, status, answer] of cases) {
      const reply = await send(method, path, body);
      expect({ path, status: reply.status, body: reply.body }).toEqual({ path, status, body: answer });
      expect(reply.headers.get('cache-control')).toBe('no-store');
    }
    expect(control.calls).toEqual([
      { method: 'prepareIncoming', args: ['wacid.1', 'v=0 offer'] },
      { method: 'connectCustomer', args: ['wacid.1'] },
      { method: 'prepareOutgoing', args: ['ref-1'] },
      { method: 'bindOutgoing', args: ['ref-1', 'wacid.2'] },
      { method: 'applyCustomerAnswer', args: ['wacid.2', 'v=0 customer'] },
      { method: 'offerAgentLeg', args: ['wacid.1', 'leg-1'] },
      { method: 'applyAgentAnswer', args: ['wacid.1', 'leg-1', 'v=0 window'] },
      { method: 'answerAgentLeg', args: ['wacid.2', 'leg-2', 'v=0 window offer'] },
      { method: 'setRoutes', args: ['wacid.1', routes] },
      { method: 'closeAgentLeg', args: ['wacid.1', 'leg-1'] },
      { method: 'report', args: ['wacid.1'] },
      { method: 'endCall', args: ['wacid.1'] },
    ]);
  });

  it('decodes ids as the paths encode them', async () => {
    const callId = 'wacid.HBgLMTU1NTEyMzQ1NjcVAgARGBI/+=';
    expect((await send('POST', BRIDGE_CONTROL_PATHS.legOffer(callId, 'leg:1.a_b-c'), undefined)).status).toBe(200);
    expect(control.calls).toEqual([{ method: 'offerAgentLeg', args: [callId, 'leg:1.a_b-c'] }]);
  });
});

describe('bridge control API: recording', () => {
  /** 16-bit little-endian PCM as the relay sends a notice. */
  const base64Of = (samples: number[]) => {
    const bytes = Buffer.alloc(samples.length * 2);
    samples.forEach((s, i) => bytes.writeInt16LE(s, i * 2));
    return bytes.toString('base64');
  };

  it('starts a recording with its notice read from base64 into 16-bit PCM, or none; and stops it', async () => {
    const cases: Array<[string, unknown]> = [
      [RECORDING_CONTROL_PATHS.start('wacid.1'), { notice: base64Of([0, 1, -2, 32_767, -32_768]) }],
      [RECORDING_CONTROL_PATHS.start('wacid.1'), {}],
      [RECORDING_CONTROL_PATHS.start('wacid.1'), { notice: '' }],
      [RECORDING_CONTROL_PATHS.stop('wacid.1'), undefined],
    ];
    for (const [path, body] of cases) expect(await send('POST', path, body)).toMatchObject({ status: 204, body: undefined });
    expect(control.calls).toEqual([
      { method: 'startRecording', args: ['wacid.1', Int16Array.from([0, 1, -2, 32_767, -32_768])] },
      { method: 'startRecording', args: ['wacid.1'] },
      { method: 'startRecording', args: ['wacid.1'] },
      { method: 'stopRecording', args: ['wacid.1'] },
    ]);
  });

  it('takes a notice of 30 s, far over the other bodies’ limit, and refuses one over its own', async () => {
    const long = Buffer.alloc(30 * 48_000 * 2, 1).toString('base64');
    expect((await send('POST', RECORDING_CONTROL_PATHS.start('wacid.1'), { notice: long })).status).toBe(204);
    expect((control.calls[0]?.args[1] as Int16Array).length).toBe(30 * 48_000);
    const reply = await send('POST', RECORDING_CONTROL_PATHS.start('wacid.1'), { notice: 'A'.repeat(9 * 1024 * 1024) });
    expect(reply).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large', limitBytes: 8 * 1024 * 1024 + 1024 } } });
    expect(control.calls).toHaveLength(1);
  });

  it('refuses a notice that is not base64 of 16-bit samples, naming it, before the method runs', async () => {
    // Not base64; base64 cut short; three bytes (no whole sample); not a string.
    for (const notice of ['not base64!', 'AAE', Buffer.from([1, 2, 3]).toString('base64'), 42]) {
      const reply = await send('POST', RECORDING_CONTROL_PATHS.start('wacid.1'), { notice });
      expect({ notice, reply: reply.body }).toMatchObject({ notice, reply: { error: { code: 'invalid_input', field: 'notice' } } });
      expect(reply.status).toBe(400);
    }
    expect((await send('GET', RECORDING_CONTROL_PATHS.stop('wacid.1'))).headers.get('allow')).toBe('POST');
    expect((await send('POST', '/calls/wacid.1/recording/pause')).status).toBe(404);
    expect(control.calls).toEqual([]);
  });
});

describe('bridge control API: refusals', () => {
  it('requires the bridge token, compared whole, before anything else', async () => {
    for (const token of [null, 'wrong-token-0123456789abcdef-0123456789', `${BRIDGE_TOKEN}x`, BRIDGE_TOKEN.slice(0, -1), '']) {
      for (const [method, path] of [
        ['POST', BRIDGE_CONTROL_PATHS.connect('wacid.1')],
        ['GET', '/no/such/path'],
      ] as const) {
        const refused = await send(method, path, undefined, token);
        expect(refused).toMatchObject({ status: 401, body: { error: { code: 'unauthorized', message: 'the bridge token is required (Authorization: Bearer <bridge token>)' } } });
        expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="bridge"');
      }
    }
    expect(control.calls).toEqual([]);
    expect(logger.text()).not.toContain(BRIDGE_TOKEN);
  });

  it('refuses a body or an id that breaks its rule with 400 naming the field, before the method runs', async () => {
    const cases: Array<[string, string, unknown, string, string]> = [
      ['POST', BRIDGE_CONTROL_PATHS.incoming('wacid.1'), undefined, '(root)', '(root): is required and must be an object'],
      ['POST', BRIDGE_CONTROL_PATHS.incoming('wacid.1'), '{"sdp":', '(root)', '(root): is required and must be an object'],
      ['POST', BRIDGE_CONTROL_PATHS.incoming('wacid.1'), { sdp: 5 }, 'sdp', 'sdp: is required and must be a string'],
      ['POST', BRIDGE_CONTROL_PATHS.customerAnswer('wacid.1'), { sdp: '' }, 'sdp', 'sdp: must not be empty'],
      ['POST', BRIDGE_CONTROL_PATHS.legAnswer('wacid.1', 'leg-1'), { sdp: 'x'.repeat(64 * 1024 + 1) }, 'sdp', 'sdp: is too long (65536 characters at most)'],
      ['POST', BRIDGE_CONTROL_PATHS.bind('ref-1'), {}, 'callId', 'callId: is required and must be a string'],
      ['POST', BRIDGE_CONTROL_PATHS.routes('wacid.1'), { routes: { customer: 'leg-1' } }, 'routes.customer', ''],
      ['POST', BRIDGE_CONTROL_PATHS.legOffer('wacid.1', '-leg'), undefined, 'legId', 'legId: must be 1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit'],
      ['POST', BRIDGE_CONTROL_PATHS.outgoing('ref 1'), undefined, 'ref', ''],
      ['GET', BRIDGE_CONTROL_PATHS.call('x'.repeat(257)), undefined, 'callId', 'callId: must be 1 to 256 characters'],
      ['DELETE', '/calls/%E0%A4%A', undefined, 'callId', 'callId: must be URL-encoded'],
    ];
    for (const [method, path, body, field, message] of cases) {
      const reply = await send(method, path, body);
      expect({ path: path.slice(0, 60), status: reply.status, code: (reply.body as { error: { code: string } }).error.code, field: (reply.body as { error: { field: string } }).error.field }).toEqual({
        path: path.slice(0, 60),
        status: 400,
        code: 'invalid_input',
        field,
      });
      if (message !== '') expect((reply.body as { error: { message: string } }).error.message).toBe(message);
    }
    expect(control.calls).toEqual([]);
  });

  it('answers an unknown path 404 and another method 405 with Allow', async () => {
    expect(await send('POST', '/calls/wacid.1/nothing', {})).toMatchObject({ status: 404, body: { error: { code: 'not_found', message: 'no such endpoint: /calls/wacid.1/nothing' } } });
    expect((await send('GET', '/', undefined)).status).toBe(404);
    expect((await send('POST', '/calls/wacid.1/legs/leg-1/offer/more', undefined)).status).toBe(404);
    const wrong = await send('PUT', BRIDGE_CONTROL_PATHS.call('wacid.1'), {});
    expect(wrong).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
    expect(wrong.headers.get('allow')).toBe('GET, DELETE');
    expect((await send('GET', BRIDGE_CONTROL_PATHS.incoming('wacid.1'))).headers.get('allow')).toBe('POST');
    expect(control.calls).toEqual([]);
  });

  it('refuses a body over its limit with 413', async () => {
    const reply = await send('POST', BRIDGE_CONTROL_PATHS.incoming('wacid.1'), { sdp: 'x'.repeat(300 * 1024) });
    expect(reply).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large', limitBytes: 256 * 1024 } } });
    expect(control.calls).toEqual([]);
  });

  it('answers a Result error with its code, message and field, at the status its code stands for', async () => {
    const cases: Array<[Parameters<ScriptedControl['answerNext']>[1], number, unknown]> = [
      [err('not_found', 'no call wacid.1 on this node'), 404, { code: 'not_found', message: 'no call wacid.1 on this node' }],
      [err('invalid_state', 'the customer leg is already connected'), 409, { code: 'invalid_state', message: 'the customer leg is already connected' }],
      [err('invalid_input', 'sdp: has no audio section', { field: 'sdp' }), 400, { code: 'invalid_input', message: 'sdp: has no audio section', field: 'sdp' }],
      [err('media_failed', 'ICE gathering failed'), 500, { code: 'media_failed', message: 'ICE gathering failed' }],
      [err('timeout', 'gathering took too long'), 504, { code: 'timeout', message: 'gathering took too long' }],
      [err('not_available', 'the node is full'), 503, { code: 'not_available', message: 'the node is full' }],
    ];
    for (const [answer, status, error] of cases) {
      control.answerNext('connectCustomer', answer);
      expect(await send('POST', BRIDGE_CONTROL_PATHS.connect('wacid.1'))).toMatchObject({ status, body: { error } });
    }
  });

  it('answers 500 when the control throws, and keeps serving', async () => {
    control.answerNext('endCall', () => Promise.reject(new Error('boom')));
    expect(await send('DELETE', BRIDGE_CONTROL_PATHS.call('wacid.1'))).toMatchObject({ status: 500, body: { error: { code: 'internal' } } });
    expect(logger.messages('error')).toContain('a control request failed');
    expect((await send('DELETE', BRIDGE_CONTROL_PATHS.call('wacid.1'))).status).toBe(204);
  });
});
