// The zod building blocks every folder parses outside data with: one place, one name each, so that
// the same rule reads the same in the gateway bodies, the templates, the webhooks and the stores.
import { z } from 'zod';
import { rule } from './i18n/rules';
import { err, ok, type Result } from './result';

/**
 * `session.sdp` from zod's path; `(root)` for the value itself. Under a prefix the path continues
 * it (`calls[2]` + `timestamp` → `calls[2].timestamp`), and the root is the prefix itself.
 */
export function fieldPath(path: ReadonlyArray<PropertyKey>, under = ''): string {
  if (path.length === 0) return under === '' ? '(root)' : under;
  const own = path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');
  if (under === '') return own;
  return `${under}${own.startsWith('[') ? '' : '.'}${own}`;
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

/** A plain object (not null, not an array): what a JSON member must be before its members are read. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.host !== '';
}

// ---------------------------------------------------------------------------------------------
// Strings

export const REQUIRED_STRING = rule('common.requiredString');

/** A string; anything else (missing included) is refused with one sentence. */
export const requiredString = () => z.string({ error: REQUIRED_STRING });

/** At least one character (spaces count as characters). */
export const nonEmptyString = () => requiredString().min(1, rule('common.notEmpty'));

/** Trimmed, then at least one character: ids and codes that arrive with stray spaces. */
export const trimmedString = () => requiredString().trim().min(1, rule('common.notEmpty'));

/** A string with something in it besides spaces, at most `max` characters; kept as given, untrimmed. */
export const nonEmptyText = (max?: number) => {
  const base = requiredString().refine((s) => s.trim() !== '', rule('common.notEmpty'));
  return max === undefined ? base : base.refine((s) => s.length <= max, rule('common.atMostCharacters', { count: max }));
};

export const httpUrlString = () => requiredString().refine(isHttpUrl, rule('common.httpAddress'));

/** A literal whose refusal says what it must be, and why when that is not obvious. */
export const literalNamed = <T extends string>(value: T, why?: string) => z.literal(value, { error: why ? rule('common.literalWhy', { value, why }) : rule('common.literal', { value }) });

// ---------------------------------------------------------------------------------------------
// Objects and numbers

export type Shape = Record<string, z.ZodType>;

/**
 * A strict object whose own problems (missing, not an object, unknown members) read well: a member
 * the gateway does not take is refused by name, so a misspelt "fillename" cannot silently vanish.
 */
export function strictObjectNamed<S extends Shape>(shape: S, what: string) {
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') {
        const keys = issue.keys.map((k) => `"${k}"`).join(', ');
        return rule('common.doesNotTake', { what, keys });
      }
      if (issue.code === 'invalid_type') return issue.input === undefined ? rule('common.requiredWhat', { what }) : rule('common.mustBeObjectWhat', { what });
      return undefined;
    },
  });
}

/** A moment in unix milliseconds, as stored files keep them. */
export const unixMs = z.number().finite().nonnegative();
