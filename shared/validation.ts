// The zod building blocks every folder parses outside data with: one place, one name each, so that
// the same rule reads the same in the gateway bodies, the templates, the webhooks and the stores.
//
// zod takes a message as a string: a check of ours gives `ruleMessage(code, values)`, its text
// encoded (a machine format, never shown), and `issueText` reads the text back from the issue.
// Whoever reads zod's issues reads them through issueText (or parseWith, which does): in English
// with `english`, in the agent's language with the window's renderer.
import { z } from 'zod';
import type { RuleId } from './i18n/rules';
import { english, fieldRule, list, ruleTextSchema, text, type RuleText, type TextValue, type TextValues } from './i18n/text';
import { err, ok, type ErrorCode, type FieldIssue, type Result } from './result';

/** What starts an encoded text: no message zod or a library writes starts with a NUL. */
const RULE_MARK = '\u0000rule:';

/** A zod check's message that carries a rule's code and values; issueText reads it back. */
export const ruleMessage = (code: RuleId, values?: TextValues): string => encodeText(text(code, values));
export const encodeText = (rule: RuleText): string => `${RULE_MARK}${JSON.stringify(rule)}`;

/** The rule an issue names: the text a check of ours encoded, or, from zod itself, its own words. */
export function issueText(issue: { readonly message: string }): TextValue {
  if (!issue.message.startsWith(RULE_MARK)) return issue.message;
  let decoded: unknown;
  try {
    decoded = JSON.parse(issue.message.slice(RULE_MARK.length));
  } catch {
    return issue.message;
  }
  const parsed = ruleTextSchema.safeParse(decoded);
  return parsed.success ? parsed.data : issue.message;
}

/** An issue's rule in English: for logs and bodies that quote zod's verdict. */
export const issueEnglish = (issue: { readonly message: string }): string => english(issueText(issue));

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

/** The issues of a failed parse, at most five, each with its field's path (under `under`). */
export const fieldIssues = (issues: readonly z.core.$ZodIssue[], under = ''): FieldIssue[] =>
  issues.slice(0, 5).map((issue) => ({ field: fieldPath(issue.path, under), text: issueText(issue) }));

/**
 * Broken rules as one `invalid_input` error: "path: rule" each, joined by "; " in its English
 * message, its text and `issues` the same as values; `field` names the first.
 */
export function invalidInput<T = never>(issues: readonly FieldIssue[]): Result<T> {
  const rules = issues.map((issue) => fieldRule(issue.field, issue.text));
  const whole: RuleText | undefined = rules.length === 1 ? rules[0] : rules.length > 1 ? text('common.fieldRules', { rules: list(rules, 'semicolon') }) : undefined;
  return err('invalid_input', whole === undefined ? '' : english(whole), {
    field: issues[0]?.field ?? '(root)',
    ...(whole === undefined ? {} : { text: whole }),
    issues: [...issues],
  });
}

/**
 * One field's broken rule as an error of `code`: "path: rule", or with `label` what stands for the
 * field in words ("Phone number: too short", "shortcuts.mute (Mute): …").
 */
export function fieldError<T = never>(
  code: ErrorCode,
  field: string,
  rule: TextValue,
  extra: { label?: TextValue; httpStatus?: number; detail?: string } = {},
): Result<T> {
  const { label, ...rest } = extra;
  const whole = fieldRule(label ?? field, rule);
  return err(code, english(whole), { field, ...rest, text: whole, issues: [{ field, text: rule }] });
}

/** Parses outside data; a broken rule becomes an `invalid_input` error naming the field and the rule. */
export function parseWith<S extends z.ZodType>(schema: S, data: unknown): Result<z.infer<S>> {
  const parsed = schema.safeParse(data);
  if (parsed.success) return ok(parsed.data);
  return invalidInput(fieldIssues(parsed.error.issues));
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

export const REQUIRED_STRING = ruleMessage('common.requiredString');

/** A string; anything else (missing included) is refused with one sentence. */
export const requiredString = () => z.string({ error: REQUIRED_STRING });

/** At least one character (spaces count as characters). */
export const nonEmptyString = () => requiredString().min(1, ruleMessage('common.notEmpty'));

/** Trimmed, then at least one character: ids and codes that arrive with stray spaces. */
export const trimmedString = () => requiredString().trim().min(1, ruleMessage('common.notEmpty'));

/** A string with something in it besides spaces, at most `max` characters; kept as given, untrimmed. */
export const nonEmptyText = (max?: number) => {
  const base = requiredString().refine((s) => s.trim() !== '', ruleMessage('common.notEmpty'));
  return max === undefined ? base : base.refine((s) => s.length <= max, ruleMessage('common.atMostCharacters', { count: max }));
};

export const httpUrlString = () => requiredString().refine(isHttpUrl, ruleMessage('common.httpAddress'));

/** A literal whose refusal says what it must be, and why when that is not obvious. */
export const literalNamed = <T extends string>(value: T, why?: TextValue) =>
  z.literal(value, { error: why !== undefined ? ruleMessage('common.literalWhy', { value, why }) : ruleMessage('common.literal', { value }) });

// ---------------------------------------------------------------------------------------------
// Objects and numbers

export type Shape = Record<string, z.ZodType>;

/**
 * A strict object whose own problems (missing, not an object, unknown members) read well: a member
 * the gateway does not take is refused by name, so a misspelt "fillename" cannot silently vanish.
 */
export function strictObjectNamed<S extends Shape>(shape: S, what: TextValue) {
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') {
        return ruleMessage('common.doesNotTake', { what, keys: list(issue.keys.map((k) => `"${k}"`)) });
      }
      if (issue.code === 'invalid_type') return issue.input === undefined ? ruleMessage('common.requiredWhat', { what }) : ruleMessage('common.mustBeObjectWhat', { what });
      return undefined;
    },
  });
}

/** A moment in unix milliseconds, as stored files keep them. */
export const unixMs = z.number().finite().nonnegative();
