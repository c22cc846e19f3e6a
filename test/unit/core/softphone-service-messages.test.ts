// The service's messaging commands in sandbox mode, against the real embedded relay and sandbox on
// 127.0.0.1: the customer writes (the window opens, pushed), a text goes out and its statuses follow,
// the call button rings this agent with its payload, the snapshot carries conversations and the
// sandbox's templates, and windows and timeline survive a restart of the service.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedEnvironment } from '../../../electron/embedded';
import type { EmbeddedEnvironment } from '../../../electron/core/embedded-environment';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import type { PushMessage } from '../../../shared/api';
import type { Conversation } from '../../../shared/conversation';
import { configureLogging } from '../../../shared/log';

configureLogging({ sink: () => undefined });

const ADA = '12025550101';

let env: EmbeddedEnvironment;
let dataDir: string;

beforeAll(async () => {
  env = await startEmbeddedEnvironment();
  dataDir = await mkdtemp(join(tmpdir(), 'service-messages-'));
});
afterAll(async () => {
  await env?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function startService(): Promise<{ service: SoftphoneService; pushes: PushMessage[] }> {
  // The environment outlives each service, as a restart of the app against the same sandbox.
  const service = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), embedded: async () => ({ ...env, close: async () => undefined }) });
  const pushes: PushMessage[] = [];
  service.subscribe((p) => pushes.push(p));
  await until(async () => {
    const s = await service.handle('getSnapshot', {});
    return s.ok && s.value.connection.status === 'connected';
  });
  return { service, pushes };
}

async function until(check: () => Promise<boolean> | boolean, what = 'condition'): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never happened: ${what}`);
}

const conversationsIn = (pushes: PushMessage[], contact: string): Conversation[] =>
  pushes.flatMap((p) => (p.name === 'conversationChanged' && p.payload.contact === contact ? [p.payload] : []));

describe('messages through the service', () => {
  it('the customer writes, a text goes out and its statuses arrive; a call button rings here; all of it survives a restart', async () => {
    const first = await startService();
    const { service, pushes } = first;

    const snapshot = await service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.sandboxTemplates?.map((t) => t.name)).toContain('order_update');

    expect(await service.handle('simulateInboundMessage', { number: ADA, text: 'Hello!' })).toMatchObject({ ok: true, value: { messageId: expect.stringMatching(/^wamid\./) } });
    await until(() => conversationsIn(pushes, ADA).some((c) => c.window.open), 'the window to open');

    const sent = await service.handle('sendMessage', { to: ADA, content: { type: 'text', text: { body: 'Hi Ada' } } });
    expect(sent.ok).toBe(true);
    const id = sent.ok ? sent.value.messageId : '';
    await until(() => conversationsIn(pushes, ADA).some((c) => c.messages.some((m) => m.id === id && m.status === 'read')), 'read');

    const button = await service.handle('sendCallButton', { to: ADA });
    expect(button.ok).toBe(true);
    const pressed = await service.handle('simulatePressCallButton', { number: ADA });
    expect(pressed.ok).toBe(true);
    await until(() => pushes.some((p) => p.name === 'callChanged' && p.payload.phase === 'ringing' && p.payload.ctaPayload !== undefined), 'the call to ring');
    const ringing = pushes.find((p) => p.name === 'callChanged' && p.payload.phase === 'ringing');
    expect(ringing?.name === 'callChanged' && JSON.parse(ringing.payload.ctaPayload!)).toEqual({ v: 1, agentId: 'agent-1', contact: ADA });
    if (ringing?.name === 'callChanged') await service.handle('declineCall', { localId: ringing.payload.localId });

    const before = await service.handle('getConversation', { contact: `+${ADA}` });
    await service.close();

    const second = await startService();
    try {
      const after = await second.service.handle('getConversation', { contact: ADA });
      expect(after.ok && before.ok).toBe(true);
      if (after.ok && before.ok) {
        expect(after.value.window).toEqual(before.value.window);
        expect(after.value.window.open).toBe(true);
        // The call button's statuses may still have been arriving while the service closed.
        expect(after.value.messages.map((m) => [m.summary, m.status])).toEqual([
          ['Hello!', undefined],
          ['Hi Ada', 'read'],
          ['Call button: Call us', expect.stringMatching(/^(accepted|sent|delivered|read)$/)],
        ]);
        expect(after.value.revision).toBeGreaterThanOrEqual(before.value.revision);
      }
      const snap = await second.service.handle('getSnapshot', {});
      expect(snap.ok && snap.value.conversations?.map((c) => c.contact)).toContain(ADA);
    } finally {
      await second.service.close();
    }
  });

  it('refuses a sandbox action the sandbox cannot do, with its reason', async () => {
    const { service } = await startService();
    try {
      const pressed = await service.handle('simulatePressCallButton', { number: '442079460101' });
      expect(pressed.ok ? 'pressed' : pressed.error.message).toMatch(/no voice_call button was sent/);
    } finally {
      await service.close();
    }
  });
});
