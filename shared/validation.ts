import type { z } from 'zod';
import { err, ok, type Result } from './result';

/** `session.sdp` from zod's path; `(root)` for the value itself. */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  if (path.length === 0) return '(root)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');
}

/** Parses outside data; a broken rule becomes an `invalid_input` error naming the field and the rule. */
export function parseWith<S extends z.ZodType>(schema: S, data: unknown): Result<z.infer<S>> {
  const parsed = schema.safeParse(data);
  if (parsed.success) return ok(parsed.data);
  const first = parsed.error.issues[0];
  const field = first ? fieldPath(first.path) : '(root)';
  const message = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${fieldPath(issue.path)}: ${issue.message}`)
    .join('; ');
  return err('invalid_input', message, { field });
}
