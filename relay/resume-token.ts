// The SSE `id:` an agent echoes back as `Last-Event-ID` (relay/REFERENCE.md "Cursors and resume").
//
// Normally it is the cursor of the event, as the backend issued it. While a session holds a call's
// events back (a colleague's voice_call head start, head-starts.ts) the events after it still flow,
// so the cursor alone would claim the held ones were seen too. The token then also lists the held
// calls: `<cursor>~held~<base64url JSON array of call ids>`. Clients treat it as opaque.
import { z } from 'zod';

const HELD_MARK = '~held~';
/** A session holds a call only for a head start (seconds); more than this at once is not a real team. */
const MAX_HELD = 32;
const heldSchema = z.array(z.string().min(1).max(512)).max(MAX_HELD);

export interface ResumePoint {
  /** The backend cursor to read after; undefined for a fresh session. */
  cursor: string | undefined;
  /** Calls whose events up to `cursor` the session has not received yet. */
  heldCallIds: string[];
}

export function formatResumeToken(cursor: string, heldCallIds: Iterable<string>): string {
  const held = [...heldCallIds].slice(0, MAX_HELD);
  if (held.length === 0) return cursor;
  return `${cursor}${HELD_MARK}${Buffer.from(JSON.stringify(held), 'utf8').toString('base64url')}`;
}

/** Anything unreadable after the mark is ignored: the cursor alone still resumes without a gap elsewhere. */
export function parseResumeToken(token: string | undefined): ResumePoint {
  const text = token?.trim() ?? '';
  if (text === '') return { cursor: undefined, heldCallIds: [] };
  const mark = text.lastIndexOf(HELD_MARK);
  if (mark < 0) return { cursor: text, heldCallIds: [] };
  const cursor = text.slice(0, mark);
  let held: unknown;
  try {
    held = JSON.parse(Buffer.from(text.slice(mark + HELD_MARK.length), 'base64url').toString('utf8'));
  } catch {
    held = [];
  }
  const parsed = heldSchema.safeParse(held);
  return { cursor: cursor === '' ? undefined : cursor, heldCallIds: parsed.success ? [...new Set(parsed.data)] : [] };
}
