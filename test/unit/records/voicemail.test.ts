// A voicemail reaches the call's record: the service sends it as an inbound audio message whose id is
// the call's (protocol.md), the relay's event carries the media's id, and the call's row keeps it.
// A voicemail comes only after a reject or a ring out: the call stays missed. The team's wallboard
// lists it.
import { describe, expect, it } from 'vitest';
import { normaliseWebhook } from '../../../shared/webhook';
import { callById } from '../../../relay/records/records-queries';
import { wallboardSchema } from '../../../shared/wallboard';
import { declineCall, putPresence, team } from '../relay/agent-fixtures';
import { CUSTOMER, inboundText, incomingCall, postWebhook, terminatedCall } from '../relay/webhook-fixtures';
import { relayWithRecords } from './relay-with-records';
import { DATABASE_HARNESSES } from './database-harness';

const MEDIA = { id: '1234567890123456', mime_type: 'audio/ogg; codecs=opus', sha256: 'f'.repeat(64) };

describe('an inbound media message in the relay\'s events', () => {
  it('carries its media id; a text message carries none', () => {
    const voicemail = inboundText('wacid.vm-norm', '', { type: 'audio', text: undefined, audio: MEDIA });
    expect(normaliseWebhook(voicemail)).toEqual([{ type: 'message.inbound', messageId: 'wacid.vm-norm', from: CUSTOMER, name: 'Ada Customer', timestamp: expect.any(Number), messageType: 'audio', mediaId: MEDIA.id }]);
    const image = inboundText('wamid.img', '', { type: 'image', text: undefined, image: { id: 'img-1' } });
    expect(normaliseWebhook(image)[0]).toMatchObject({ messageType: 'image', mediaId: 'img-1' });
    // Only the member the type names: an audio message with a stray image member has no media.
    const stray = inboundText('wamid.stray', '', { type: 'audio', text: undefined, image: { id: 'img-2' } });
    expect(normaliseWebhook(stray)[0]).not.toHaveProperty('mediaId');
    expect(normaliseWebhook(inboundText('wamid.txt', 'Hello'))[0]).not.toHaveProperty('mediaId');
  });
});

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('a voicemail in the records on %s', (_name, make) => {
  const { agents, tokens } = team('alice', 'bob');
  const t = relayWithRecords(make, { agents });

  it("keeps the media id of a missed call's voicemail on its row; the call stays missed; the wallboard lists it", async () => {
    for (const agent of ['alice', 'bob']) expect((await putPresence(t.relay().url, tokens[agent]!, { status: 'available' })).status).toBe(200);
    const callId = 'wacid.vm-1';
    expect((await postWebhook(t.relay().url, incomingCall(callId))).status).toBe(200);
    await t.stored('call.incoming', callId);
    expect((await declineCall(t.relay().url, tokens.alice!, callId)).body).toMatchObject({ othersRinging: 1 });
    expect((await declineCall(t.relay().url, tokens.bob!, callId)).body).toMatchObject({ othersRinging: 0 });
    expect((await postWebhook(t.relay().url, terminatedCall(callId))).status).toBe(200);
    await t.stored('call.terminated', callId);
    expect((await postWebhook(t.relay().url, inboundText(callId, '', { type: 'audio', text: undefined, audio: MEDIA }))).status).toBe(200);
    expect((await t.stored('message.inbound', callId)).event).toMatchObject({ messageType: 'audio', mediaId: MEDIA.id });

    expect(await t.records().flush()).toBe(true);
    const db = await t.records().database();
    const call = await callById(db, callId);
    expect(call).toMatchObject({ outcome: 'missed', declinedAgents: ['alice', 'bob'], voicemailMediaId: MEDIA.id, voicemailAt: expect.any(Number) });

    const answer = await fetch(`${t.relay().url}/team/wallboard`, { headers: { authorization: `Bearer ${tokens.bob!}` } });
    expect(answer.status).toBe(200);
    const board = wallboardSchema.parse(await answer.json());
    expect(board.voicemails).toEqual([{ callId, mediaId: MEDIA.id, at: call!.voicemailAt, ringingAt: call!.rangAt, number: CUSTOMER, name: 'Ada Customer' }]);
  }, 30_000);
});
