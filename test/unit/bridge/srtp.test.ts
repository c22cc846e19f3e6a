// The node's own SRTP for RTP (bridge/media/srtp.ts), held against werift's SrtpSession — what every
// werift peer, and the keys the node takes from it, speak — in both profiles WebRTC negotiates:
// each side reads what the other protected, across the 16-bit wrap and out of order, and nothing
// that does not authenticate gets through.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ProtectionProfileAeadAes128Gcm, ProtectionProfileAes128CmHmacSha1_80, RtpHeader, RtpPacket, SrtpSession } from 'werift';
import { estimateRoc, REPLAY_WINDOW, SRTP_AEAD_AES_128_GCM, SRTP_AES128_CM_HMAC_SHA1_80, SrtpReceiver, SrtpSender, type RtpFields, type SrtpKeys } from '../../../bridge/media/srtp';

const PROFILES = [
  { name: 'AEAD_AES_128_GCM', profile: ProtectionProfileAeadAes128Gcm, saltBytes: 12 },
  { name: 'AES_CM_128_HMAC_SHA1_80', profile: ProtectionProfileAes128CmHmacSha1_80, saltBytes: 14 },
] as const;

/** Two werift sessions facing each other (a's local keys are b's remote ones), and our two directions on the same keys. */
function sessions(profile: number, saltBytes: number) {
  const [keyA, saltA, keyB, saltB] = [randomBytes(16), randomBytes(saltBytes), randomBytes(16), randomBytes(saltBytes)];
  const a = new SrtpSession({ profile, keys: { localMasterKey: keyA, localMasterSalt: saltA, remoteMasterKey: keyB, remoteMasterSalt: saltB } });
  const b = new SrtpSession({ profile, keys: { localMasterKey: keyB, localMasterSalt: saltB, remoteMasterKey: keyA, remoteMasterSalt: saltA } });
  const keys = (context: SrtpSession['localContext']): SrtpKeys => ({ profile: context.profile, key: context.srtpSessionKey, salt: context.srtpSessionSalt, authKey: context.srtpSessionAuthTag });
  return { werift: a, local: keys(b.localContext), ours: { sender: new SrtpSender(keys(b.localContext)), receiver: new SrtpReceiver(keys(b.remoteContext)) } };
}

const fields = (sequenceNumber: number, extra: Partial<RtpFields> = {}): RtpFields => ({ payloadType: 111, marker: false, sequenceNumber, timestamp: (sequenceNumber * 960) >>> 0, ssrc: 0x1234_5678, ...extra });

describe.each(PROFILES)('SRTP, $name', ({ profile, saltBytes }) => {
  test('werift reads what we protect, header fields and payload alike', () => {
    const { werift, ours } = sessions(profile, saltBytes);
    for (const [i, f] of [fields(1), fields(2, { marker: true, payloadType: 126 }), fields(3, { timestamp: 0xffff_ffff })].entries()) {
      const payload = randomBytes(20 + i * 30);
      const packet = RtpPacket.deSerialize(werift.decrypt(ours.sender.protect(f, payload)!));
      expect(packet.header).toMatchObject({ version: 2, padding: false, extension: false, csrcLength: 0, ...f });
      expect(packet.payload.equals(payload)).toBe(true);
    }
  });

  test('we read what werift protects', () => {
    const { werift, ours } = sessions(profile, saltBytes);
    for (let sequenceNumber = 100; sequenceNumber < 110; sequenceNumber++) {
      const payload = randomBytes(60);
      const f = fields(sequenceNumber, { marker: sequenceNumber === 100 });
      const read = ours.receiver.unprotect(werift.encrypt(payload, new RtpHeader({ ...f })));
      expect(read).toMatchObject(f);
      expect(read?.payload.equals(payload)).toBe(true);
    }
  });

  test('a header with CSRCs, an extension and padding is read past them (RFC 3550 5.1, 5.3.1)', () => {
    const { werift, ours } = sessions(profile, saltBytes);
    const header = new RtpHeader({ ...fields(7), csrcLength: 2, csrc: [11, 22], extension: true, extensions: [{ id: 1, payload: Buffer.from([0x30]) }] });
    const payload = randomBytes(33);
    expect(ours.receiver.unprotect(werift.encrypt(payload, header))?.payload.equals(payload)).toBe(true);
    // Padded by hand: the last byte counts the padding (here 3 bytes), itself included.
    const padded = new RtpHeader({ ...fields(8), padding: true });
    const read = ours.receiver.unprotect(werift.encrypt(Buffer.concat([payload, Buffer.from([0, 0, 3])]), padded));
    expect(read?.payload.equals(payload)).toBe(true);
  });

  test('both ways across the 16-bit wrap, with packets reordered around it', () => {
    const { werift, local, ours } = sessions(profile, saltBytes);
    // werift keeps a rollover guess of its own that follows an in-order stream: it is fed one.
    for (const sequenceNumber of [65533, 65534, 65535, 0, 1, 2]) {
      const payload = Buffer.from([sequenceNumber & 0xff, sequenceNumber >> 8]);
      expect(ours.receiver.unprotect(werift.encrypt(payload, new RtpHeader({ ...fields(sequenceNumber) })))?.sequenceNumber).toBe(sequenceNumber);
      const theirs = RtpPacket.deSerialize(werift.decrypt(ours.sender.protect(fields(sequenceNumber), payload)!));
      expect(theirs.payload.equals(payload)).toBe(true);
    }
    // Ours both ways, reordered across the wrap: each packet keeps the ROC it was sent with.
    const sender = new SrtpSender(local);
    const receiver = new SrtpReceiver(local);
    const sent = [65533, 65534, 65535, 0, 1, 2, 3].map((sequenceNumber) => ({ sequenceNumber, packet: sender.protect(fields(sequenceNumber), Buffer.from([sequenceNumber & 0xff]))! }));
    for (const i of [0, 1, 3, 2, 4, 6, 5]) expect(receiver.unprotect(sent[i]!.packet)?.sequenceNumber).toBe(sent[i]!.sequenceNumber);
    // Another session's keys: nothing authenticates.
    expect(sessions(profile, saltBytes).ours.receiver.unprotect(sent[0]!.packet)).toBeUndefined();
  });

  test('a packet changed on the way, cut short, or not RTP is refused', () => {
    const { werift, ours } = sessions(profile, saltBytes);
    const good = werift.encrypt(randomBytes(60), new RtpHeader({ ...fields(5) }));
    for (const at of [1, 3, 9, 20, good.length - 1]) {
      const bad = Buffer.from(good);
      bad[at]! ^= 0x01;
      expect(ours.receiver.unprotect(bad)).toBeUndefined();
    }
    expect(ours.receiver.unprotect(good.subarray(0, 20))).toBeUndefined();
    expect(ours.receiver.unprotect(Buffer.alloc(8))).toBeUndefined();
    const notVersion2 = Buffer.from(good);
    notVersion2[0] = 0x40;
    expect(ours.receiver.unprotect(notVersion2)).toBeUndefined();
    // The good one still passes after all that: a refused packet moved no state.
    expect(ours.receiver.unprotect(good)?.sequenceNumber).toBe(5);
  });
});

describe.each(PROFILES)('replay protection (RFC 3711 3.3.2), $name', ({ profile, saltBytes }) => {
  test('the same packet twice: the second is refused, and the first still counts', () => {
    const { werift, ours } = sessions(profile, saltBytes);
    const packet = werift.encrypt(randomBytes(40), new RtpHeader({ ...fields(10) }));
    expect(ours.receiver.unprotect(packet)?.sequenceNumber).toBe(10);
    expect(ours.receiver.unprotect(Buffer.from(packet))).toBeUndefined();
    const next = werift.encrypt(randomBytes(40), new RtpHeader({ ...fields(11) }));
    expect(ours.receiver.unprotect(next)?.sequenceNumber).toBe(11);
    expect(ours.receiver.unprotect(next)).toBeUndefined();
    expect(ours.receiver.unprotect(packet)).toBeUndefined();
  });

  test('a packet older than the window is refused, one reordered inside it taken exactly once', () => {
    const { local } = sessions(profile, saltBytes);
    const sender = new SrtpSender(local);
    const receiver = new SrtpReceiver(local);
    const sent = Array.from({ length: REPLAY_WINDOW + 20 }, (_, i) => sender.protect(fields((65_500 + i) & 0xffff), Buffer.from([i & 0xff]))!);
    // The first, then everything but the second and the 150th, across the 16-bit wrap.
    expect(receiver.unprotect(sent[0]!)).toBeDefined();
    for (let i = 2; i < sent.length; i++) if (i !== 150) expect(receiver.unprotect(sent[i]!)?.sequenceNumber).toBe((65_500 + i) & 0xffff);
    // The second is now further behind the newest than the window reaches: refused though authentic.
    expect(receiver.unprotect(sent[1]!)).toBeUndefined();
    // The 150th is behind by fewer than the window (and more than the bridge's 100 of reordering): taken, once.
    expect(receiver.unprotect(sent[150]!)?.sequenceNumber).toBe((65_500 + 150) & 0xffff);
    expect(receiver.unprotect(sent[150]!)).toBeUndefined();
    expect(receiver.unprotect(sent[sent.length - 1]!)).toBeUndefined();
  });

  test('a forged packet does not take its index from the real one', () => {
    const { werift, ours } = sessions(profile, saltBytes);
    expect(ours.receiver.unprotect(werift.encrypt(randomBytes(40), new RtpHeader({ ...fields(1) })))).toBeDefined();
    const real = werift.encrypt(randomBytes(40), new RtpHeader({ ...fields(2) }));
    const forged = Buffer.from(real);
    forged[real.length - 1]! ^= 0x01;
    expect(ours.receiver.unprotect(forged)).toBeUndefined();
    expect(ours.receiver.unprotect(real)?.sequenceNumber).toBe(2);
  });

  test('the sender never protects one index twice (a GCM nonce is never reused)', () => {
    const { werift, ours } = sessions(profile, saltBytes);
    const first = ours.sender.protect(fields(7), Buffer.from([1]));
    expect(first).toBeDefined();
    expect(ours.sender.protect(fields(7), Buffer.from([2]))).toBeUndefined();
    expect(ours.sender.protect(fields(8), Buffer.from([3]))).toBeDefined();
    // Out of order is fine, once.
    expect(ours.sender.protect(fields(6), Buffer.from([4]))).toBeDefined();
    expect(ours.sender.protect(fields(6), Buffer.from([5]))).toBeUndefined();
    expect(ours.sender.protect(fields(8), Buffer.from([6]))).toBeUndefined();
    // The same sequence number on another SSRC is another index.
    expect(ours.sender.protect(fields(7, { ssrc: 99 }), Buffer.from([7]))).toBeDefined();
    expect(RtpPacket.deSerialize(werift.decrypt(first!)).payload[0]).toBe(1);
  });
});

describe('the rollover counter (RFC 3711 3.3.1)', () => {
  test('the index nearest the highest seen', () => {
    expect(estimateRoc({ roc: 0, highestSequence: 65_530 }, 3)).toBe(1);
    expect(estimateRoc({ roc: 0, highestSequence: 65_530 }, 65_000)).toBe(0);
    expect(estimateRoc({ roc: 1, highestSequence: 3 }, 65_534)).toBe(0);
    expect(estimateRoc({ roc: 1, highestSequence: 3 }, 10)).toBe(1);
    expect(estimateRoc({ roc: 2, highestSequence: 40_000 }, 1)).toBe(3);
  });

  test('property: a sender and a receiver agree on every packet of any stream reordered by up to 100', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff }), fc.array(fc.integer({ min: -100, max: 100 }), { minLength: 1, maxLength: 300 }), (start, jitter) => {
        const keys: SrtpKeys = { profile: SRTP_AEAD_AES_128_GCM, key: randomBytes(16), salt: randomBytes(12), authKey: Buffer.alloc(0) };
        const sender = new SrtpSender(keys);
        const receiver = new SrtpReceiver(keys);
        // Sent in order; arriving in an order shuffled by up to 100 places (never before the first).
        const sent = jitter.map((_, i) => ({ at: i, sequence: (start + i) & 0xffff, packet: sender.protect(fields((start + i) & 0xffff), Buffer.from([i & 0xff]))! }));
        const arrival = sent.map((s, i) => ({ ...s, key: i === 0 ? -Infinity : i + jitter[i]! })).sort((x, y) => x.key - y.key);
        return arrival.every(({ sequence, packet }) => receiver.unprotect(packet)?.sequenceNumber === sequence);
      }),
      { numRuns: 60 },
    );
  });

  test('an unknown profile is refused at once', () => {
    expect(() => new SrtpSender({ profile: 2, key: randomBytes(16), salt: randomBytes(14), authKey: randomBytes(20) })).toThrow(/profile 2/);
    expect(SRTP_AES128_CM_HMAC_SHA1_80).toBe(ProtectionProfileAes128CmHmacSha1_80);
    expect(SRTP_AEAD_AES_128_GCM).toBe(ProtectionProfileAeadAes128Gcm);
  });
});
