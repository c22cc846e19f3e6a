// SRTP for the RTP packets a leg carries (RFC 3711, RFC 7714), straight from and into the wire's
// bytes. werift's own SrtpSession parses every header twice, bit by bit through strings, and builds
// objects on the way: for a node that forwards thousands of packets a second that is most of its
// work. Here one packet is one cipher (Node's OpenSSL), one output buffer and a few reads.
//
// The keys are the session keys werift derived from the DTLS handshake (its Context: RFC 3711 4.3);
// only RTP is done here: SRTCP stays werift's (a few packets a second).
//
// - AEAD_AES_128_GCM (RFC 7714 8): IV = (0x0000 ‖ SSRC ‖ ROC ‖ SEQ) ⊕ salt, the header as AAD, a
//   16-byte tag after the payload.
// - AES_CM_128_HMAC_SHA1_80 (RFC 3711 4.1.1, 4.2): the counter (salt·2^16) ⊕ (SSRC·2^64) ⊕ (index·2^16),
//   an HMAC-SHA1 of header, payload and ROC truncated to 10 bytes after the payload.
// - The rollover counter of each SSRC, sender's and receiver's alike, is RFC 3711 3.3.1's estimate
//   against the highest index seen, so that a packet reordered across a wrap keeps the ROC it was
//   sent with; a receiver moves its state on only for a packet that authenticates.
// - Replay (RFC 3711 3.3.2): each SSRC keeps a window of the indices seen below its highest. A
//   receiver refuses, before any cipher, an index seen already or too old for the window, and marks
//   one only once it authenticates; a sender refuses to protect an index twice, since GCM's keystream
//   and tag under a nonce used twice give the payloads and the key away.
//
// Pure: bytes in, bytes out; nothing here knows sockets or time.
import { createCipheriv, createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto';

/** The two protection profiles WebRTC negotiates (RFC 5764 4.1.2, RFC 7714 14.2), by werift's numbers. */
export const SRTP_AES128_CM_HMAC_SHA1_80 = 1;
export const SRTP_AEAD_AES_128_GCM = 7;

/** One direction's session keys (RFC 3711 4.3). */
export interface SrtpKeys {
  profile: number;
  key: Buffer;
  /** 14 bytes for AES-CM, 12 for GCM. */
  salt: Buffer;
  /** The HMAC key (AES-CM only). */
  authKey: Buffer;
}

/** The fields of an RTP header the bridge reads and writes. */
export interface RtpFields {
  payloadType: number;
  marker: boolean;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
}

export interface RtpPacketIn extends RtpFields {
  payload: Buffer;
}

const RTP_HEADER_BYTES = 12;
const GCM_TAG_BYTES = 16;
const HMAC_TAG_BYTES = 10;

/** Whether SRTP here can protect a profile's packets. */
export const supportedProfile = (profile: number): boolean => profile === SRTP_AEAD_AES_128_GCM || profile === SRTP_AES128_CM_HMAC_SHA1_80;

/** Where a packet's 48-bit index stands against the highest one seen of its SSRC. */
interface Rollover {
  roc: number;
  highestSequence: number;
}

/**
 * How many indices below the highest are remembered (RFC 3711 3.3.2 asks at least 64). The bridge's
 * outbound streams pass reordering of up to 100 packets, and a listener's side may add its own.
 */
export const REPLAY_WINDOW = 256;

/** An SSRC's highest index and the indices seen in the window below it, a bit each, by index modulo the window. */
interface StreamState extends Rollover {
  seen: Uint8Array;
}

const indexOf = (roc: number, sequence: number): number => roc * 0x10000 + sequence;
const highestIndex = (state: Rollover): number => indexOf(state.roc, state.highestSequence);

/** Whether an index may still be taken: newer than the window's floor, and not seen yet. */
function fresh(state: StreamState, roc: number, sequence: number): boolean {
  // A ROC estimated below 0 wrapped round to 2^32 − 1: a packet from before the stream's first.
  if (roc > state.roc + 1) return false;
  const index = indexOf(roc, sequence);
  const highest = highestIndex(state);
  if (index > highest) return true;
  if (index <= highest - REPLAY_WINDOW) return false;
  return state.seen[index % REPLAY_WINDOW] === 0;
}

/** Marks an index seen, sliding the window (and forgetting what falls out of it) when the index is the newest. */
function markSeen(state: StreamState, roc: number, sequence: number): void {
  const index = indexOf(roc, sequence);
  const highest = highestIndex(state);
  if (index > highest) {
    if (index - highest >= REPLAY_WINDOW) state.seen.fill(0);
    else for (let i = highest + 1; i < index; i++) state.seen[i % REPLAY_WINDOW] = 0;
    state.roc = roc;
    state.highestSequence = sequence;
  }
  state.seen[index % REPLAY_WINDOW] = 1;
}

const newStream = (sequence: number): StreamState => {
  const state: StreamState = { roc: 0, highestSequence: sequence, seen: new Uint8Array(REPLAY_WINDOW) };
  state.seen[sequence % REPLAY_WINDOW] = 1;
  return state;
};

/**
 * RFC 3711 3.3.1: the ROC of a sequence number, guessed against the highest seen, so that the index
 * is the one nearest to it (a packet just before a wrap keeps the old ROC, one just after takes the next).
 */
export function estimateRoc(state: Rollover, sequence: number): number {
  const { roc, highestSequence } = state;
  if (highestSequence < 0x8000) return sequence - highestSequence > 0x8000 ? (roc - 1) >>> 0 : roc;
  return highestSequence - 0x8000 > sequence ? (roc + 1) >>> 0 : roc;
}

abstract class SrtpDirection {
  protected readonly streams = new Map<number, StreamState>();
  /** The IV (GCM, 12 bytes) or counter (AES-CM, 16 bytes) of the packet at hand: one buffer, rewritten each time. */
  private readonly iv: Buffer;

  constructor(protected readonly keys: SrtpKeys) {
    if (!supportedProfile(keys.profile)) throw new Error(`SRTP profile ${keys.profile} is not supported`);
    this.iv = Buffer.alloc(keys.profile === SRTP_AEAD_AES_128_GCM ? 12 : 16);
  }

  protected get gcm(): boolean {
    return this.keys.profile === SRTP_AEAD_AES_128_GCM;
  }

  /** GCM: (0x0000 ‖ SSRC ‖ ROC ‖ SEQ) ⊕ salt. AES-CM: (SSRC·2^64 ‖ index·2^16) ⊕ salt·2^16. */
  protected ivFor(ssrc: number, roc: number, sequence: number): Buffer {
    const { iv } = this;
    const salt = this.keys.salt;
    iv.fill(0);
    iv.writeUInt32BE(ssrc, 2 + (this.gcm ? 0 : 2));
    iv.writeUInt32BE(roc, 6 + (this.gcm ? 0 : 2));
    iv.writeUInt16BE(sequence, 10 + (this.gcm ? 0 : 2));
    // GCM's 96-bit salt is the first 12 bytes of the 14 the key derivation gives (RFC 7714 11).
    for (let i = 0; i < Math.min(iv.length, salt.length); i++) iv[i]! ^= salt[i]!;
    return iv;
  }

  /** RFC 3711 4.2: HMAC-SHA1 over the authenticated portion and the ROC, its first 80 bits. */
  protected hmacTag(authenticated: Buffer, roc: number): Buffer {
    const rocBytes = Buffer.allocUnsafe(4);
    rocBytes.writeUInt32BE(roc, 0);
    return createHmac('sha1', this.keys.authKey).update(authenticated).update(rocBytes).digest().subarray(0, HMAC_TAG_BYTES);
  }
}

/**
 * One leg's outgoing RTP: a 12-byte header (no CSRC, no extension), the payload, protected; undefined
 * for an index already protected (or too far behind to tell), which must not go out.
 */
export class SrtpSender extends SrtpDirection {
  protect(fields: RtpFields, payload: Uint8Array): Buffer | undefined {
    const { sequenceNumber, ssrc } = fields;
    let roc = 0;
    const state = this.streams.get(ssrc);
    if (state) {
      roc = estimateRoc(state, sequenceNumber);
      if (!fresh(state, roc, sequenceNumber)) return undefined;
      markSeen(state, roc, sequenceNumber);
    } else {
      this.streams.set(ssrc, newStream(sequenceNumber));
    }
    const tagBytes = this.gcm ? GCM_TAG_BYTES : HMAC_TAG_BYTES;
    const packet = Buffer.allocUnsafe(RTP_HEADER_BYTES + payload.length + tagBytes);
    packet[0] = 0x80;
    packet[1] = (fields.marker ? 0x80 : 0) | (fields.payloadType & 0x7f);
    packet.writeUInt16BE(sequenceNumber, 2);
    packet.writeUInt32BE(fields.timestamp >>> 0, 4);
    packet.writeUInt32BE(ssrc >>> 0, 8);
    const header = packet.subarray(0, RTP_HEADER_BYTES);
    const iv = this.ivFor(ssrc, roc, sequenceNumber);
    if (this.gcm) {
      const cipher = createCipheriv('aes-128-gcm', this.keys.key, iv);
      cipher.setAAD(header);
      const body = cipher.update(payload);
      cipher.final();
      body.copy(packet, RTP_HEADER_BYTES);
      cipher.getAuthTag().copy(packet, RTP_HEADER_BYTES + payload.length);
    } else {
      const body = createCipheriv('aes-128-ctr', this.keys.key, iv).update(payload);
      body.copy(packet, RTP_HEADER_BYTES);
      this.hmacTag(packet.subarray(0, RTP_HEADER_BYTES + payload.length), roc).copy(packet, RTP_HEADER_BYTES + payload.length);
    }
    return packet;
  }
}

/**
 * One leg's incoming RTP: the header read, the packet authenticated and its payload decrypted;
 * undefined when it does not authenticate, is a replay or is no RTP.
 */
export class SrtpReceiver extends SrtpDirection {
  unprotect(packet: Buffer): RtpPacketIn | undefined {
    const tagBytes = this.gcm ? GCM_TAG_BYTES : HMAC_TAG_BYTES;
    const end = packet.length - tagBytes;
    if (end < RTP_HEADER_BYTES || packet[0]! >> 6 !== 2) return undefined;
    let headerBytes = RTP_HEADER_BYTES + (packet[0]! & 0x0f) * 4;
    if (packet[0]! & 0x10) {
      // RFC 3550 5.3.1: a profile word and a length in 32-bit words, then the extension itself.
      if (headerBytes + 4 > end) return undefined;
      headerBytes += 4 + packet.readUInt16BE(headerBytes + 2) * 4;
    }
    if (headerBytes > end) return undefined;
    const sequenceNumber = packet.readUInt16BE(2);
    const ssrc = packet.readUInt32BE(8);
    const known = this.streams.get(ssrc);
    const roc = known ? estimateRoc(known, sequenceNumber) : 0;
    // A replay costs no cipher: the index alone refuses it.
    if (known && !fresh(known, roc, sequenceNumber)) return undefined;
    const iv = this.ivFor(ssrc, roc, sequenceNumber);
    let payload: Buffer;
    try {
      if (this.gcm) {
        const decipher = createDecipheriv('aes-128-gcm', this.keys.key, iv);
        decipher.setAAD(packet.subarray(0, headerBytes));
        decipher.setAuthTag(packet.subarray(end));
        payload = decipher.update(packet.subarray(headerBytes, end));
        decipher.final();
      } else {
        const tag = this.hmacTag(packet.subarray(0, end), roc);
        if (!timingSafeEqual(tag, packet.subarray(end))) return undefined;
        payload = createDecipheriv('aes-128-ctr', this.keys.key, iv).update(packet.subarray(headerBytes, end));
      }
    } catch {
      // The tag did not match: not from the other side, or damaged.
      return undefined;
    }
    if (packet[0]! & 0x20) {
      // RFC 3550 5.1: the last padding byte counts the padding, itself included.
      const padding = payload[payload.length - 1] ?? 0;
      if (padding === 0 || padding > payload.length) return undefined;
      payload = payload.subarray(0, payload.length - padding);
    }
    if (known) markSeen(known, roc, sequenceNumber);
    else this.streams.set(ssrc, newStream(sequenceNumber));
    return { payloadType: packet[1]! & 0x7f, marker: (packet[1]! & 0x80) !== 0, sequenceNumber, timestamp: packet.readUInt32BE(4), ssrc, payload };
  }
}
