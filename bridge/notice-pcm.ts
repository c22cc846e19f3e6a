// The consent notice on its way from the relay to a remote node (shared/bridge-recording.ts
// RECORDING_CONTROL_PATHS.start): 16-bit PCM, little-endian, in base64, whatever the machines' own
// byte order.
import { err, ok, type Result } from '../shared/result';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function noticeToBase64(pcm: Int16Array): string {
  const bytes = Buffer.alloc(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) bytes.writeInt16LE(pcm[i]!, i * 2);
  return bytes.toString('base64');
}

/** The PCM of a notice's base64, or why it is none (field `notice`). */
export function noticeFromBase64(text: string): Result<Int16Array> {
  // Node's own decoder skips what is not base64: a mangled notice would play as noise.
  if (!BASE64.test(text)) return err('invalid_input', 'notice: must be base64', { field: 'notice' });
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 2 !== 0) return err('invalid_input', 'notice: must be 16-bit PCM (an even number of bytes)', { field: 'notice' });
  const pcm = new Int16Array(bytes.length / 2);
  for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(i * 2);
  return ok(pcm);
}
