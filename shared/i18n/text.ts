// Words at the edge (style.md 19): a rule message travels as its code and values, never as a
// sentence, and each place that shows it renders it from its own catalogue. shared/'s schemas and
// checks make a RuleText ({ code: 'phone.linkScheme', values: { scheme: 'http' } }); the main
// process, the relay and the sandbox render it in English where English must go out (an AppError's
// `message`, an HTTP body, a log line); the window (its i18next `rules` namespace) and the main
// process's own dialogs (electron/desktop/desktop-texts.ts) render the same value in the agent's
// language. One renderer, renderText, does both: only the lookup differs.
//
// A value is data (a string or a number, shown as it is and, in a right-to-left sentence, kept left
// to right), one of the catalogue's terms ("the API key"), another RuleText (the media check's
// "the file is {{what}}" takes "a GIF image"), or a list of values joined by the catalogue's
// punctuation ("MP3, 44.1 kHz, mono"). All of it is plain JSON: it crosses IPC and the WebSocket.
import { z } from 'zod';
import { RULE_IDS, RULE_TERM_NAMES, ruleTemplate, RULE_TERMS, type RuleId, type RuleTerm } from './rules';

/** A rule message as its code and values: `{ code: 'common.atMostCharacters', values: { count: 20 } }`. */
export interface RuleText {
  readonly code: RuleId;
  readonly values?: TextValues;
}
export type TextValues = { readonly [name: string]: TextValue };

/** One of the catalogue's words, said in the language where it is shown. */
export interface TermRef {
  readonly term: RuleTerm;
}

/** How a list's items are joined: the catalogue's `lists.comma` (", "), `lists.plus` (" + "), `lists.semicolon` ("; "). */
export const LIST_JOINS = ['comma', 'plus', 'semicolon'] as const;
export type ListJoin = (typeof LIST_JOINS)[number];

/** Values one after another: a file's description, the extensions a type allows, several fields' rules. */
export interface TextList {
  readonly list: readonly TextValue[];
  readonly join: ListJoin;
}

export type TextValue = string | number | TermRef | RuleText | TextList;

export const text = (code: RuleId, values?: TextValues): RuleText => (values === undefined ? { code } : { code, values });
export const term = (name: RuleTerm): TermRef => ({ term: name });
export const list = (items: readonly TextValue[], join: ListJoin = 'comma'): TextList => ({ list: items, join });

/** ".jpeg, .jpg or .png": the last item joined by the catalogue's "or"; one item alone is itself. */
export const orList = (items: readonly TextValue[]): TextValue =>
  items.length <= 1 ? (items[0] ?? '') : text('lists.or', { items: list(items.slice(0, -1)), last: items[items.length - 1]! });

/**
 * Sentences one after another, a space between them (the catalogue's `lists.spaced`, a pair: a
 * separator alone would be a blank string for translators). Halved, so that twenty sentences nest
 * five deep, well within what renderText follows.
 */
export function spaced(items: readonly TextValue[]): TextValue {
  if (items.length <= 1) return items[0] ?? '';
  const half = Math.ceil(items.length / 2);
  return text('lists.spaced', { first: spaced(items.slice(0, half)), rest: spaced(items.slice(half)) });
}

/** "gatewayUrl: must end in …": a rule with the field it is about, a path or a term ("Phone number"). */
export const fieldRule = (field: TextValue, rule: TextValue): RuleText => text('common.fieldRule', { field, rule });

export const isRuleText = (value: TextValue): value is RuleText => typeof value === 'object' && 'code' in value;
export const isTermRef = (value: TextValue): value is TermRef => typeof value === 'object' && 'term' in value;
export const isTextList = (value: TextValue): value is TextList => typeof value === 'object' && 'list' in value;

/**
 * A catalogue in one language: `lookup('phone.linkScheme', { scheme })`, `lookup('terms.apiKey')`,
 * `lookup('lists.comma')`. A plural's `count` arrives as a number and picks the form.
 */
export type TextLookup = (key: string, values?: Readonly<Record<string, string | number>>) => string;

export interface RenderOptions {
  /**
   * Data kept left to right inside a right-to-left sentence (LRI … PDI): given while the language
   * is right to left. Every string and number value is data, except a plural's `count`, which the
   * language's own words surround.
   */
  isolate?: ((text: string) => string) | undefined;
}

/** How deep values may nest: a refusal, the file it names, the stream that names. Deeper is not ours. */
const MOST_DEPTH = 12;

/**
 * A text in the language of `lookup`: `renderText({ code: 'phone.linkScheme', values: { scheme: 'http' } }, english)`
 * → `"http:" links are not phone numbers (use tel: or callto:)`. A string alone is words the
 * catalogue did not make (a server's, a library's) and comes back as it is.
 */
export function renderText(value: TextValue, lookup: TextLookup, options: RenderOptions = {}): string {
  const { isolate } = options;
  const data = (shown: string): string => (isolate !== undefined && shown !== '' ? isolate(shown) : shown);

  const valueText = (v: TextValue, depth: number): string => {
    if (typeof v === 'string') return data(v);
    if (typeof v === 'number') return data(String(v));
    return composed(v, depth);
  };

  const composed = (v: TermRef | RuleText | TextList, depth: number): string => {
    if (depth > MOST_DEPTH) return '';
    if (isTermRef(v)) return lookup(`terms.${v.term}`);
    if (isTextList(v)) return v.list.map((item) => valueText(item, depth + 1)).join(lookup(`lists.${v.join}`));
    const values: Record<string, string | number> = {};
    for (const [name, inner] of Object.entries(v.values ?? {})) values[name] = name === 'count' && typeof inner === 'number' ? inner : valueText(inner, depth + 1);
    return lookup(v.code, values);
  };

  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return composed(value, 0);
}

const ENGLISH_TERMS: Readonly<Record<string, string>> = RULE_TERMS;

/** The English catalogue (locales/en/rules.json) as a lookup: a plain {{name}} replace, no i18next. */
export const englishLookup: TextLookup = (key, values = {}) => {
  const dot = key.indexOf('.');
  const group = key.slice(0, dot);
  const name = key.slice(dot + 1);
  if (group === 'terms') return ENGLISH_TERMS[name] ?? key;
  const count = typeof values.count === 'number' ? values.count : undefined;
  return ruleTemplate(key as RuleId, count).replace(/\{\{(\w+)\}\}/g, (whole, slot: string) => (Object.hasOwn(values, slot) ? String(values[slot]) : whole));
};

/** A text in English: what an AppError's `message`, an HTTP body and a log line say. */
export const english = (value: TextValue): string => renderText(value, englishLookup);

/** A rule's English message, its values filled in: rule('settings.versionSegment', { example }). */
export const rule = (code: RuleId, values?: TextValues): string => english(text(code, values));

/**
 * The same text with every string in it passed through `change` (a link's query cut off, say);
 * codes, terms and numbers stay as they are.
 */
export function mapStrings<T extends TextValue>(value: T, change: (data: string) => string): T;
export function mapStrings(value: TextValue, change: (data: string) => string): TextValue {
  if (typeof value === 'string') return change(value);
  if (typeof value === 'number' || isTermRef(value)) return value;
  if (isTextList(value)) return list(value.list.map((item) => mapStrings(item, change)), value.join);
  if (value.values === undefined) return value;
  return text(value.code, Object.fromEntries(Object.entries(value.values).map(([name, inner]) => [name, mapStrings(inner, change)])));
}

// ---------------------------------------------------------------------------------------------
// The schemas a text is checked with where it enters a process (the window's edge).

const MOST_LIST_ITEMS = 200;
const MOST_DATA = 16 * 1024;

export const textValueSchema: z.ZodType<TextValue> = z.lazy(() =>
  z.union([
    z.string().max(MOST_DATA),
    z.number(),
    z.strictObject({ term: z.enum(RULE_TERM_NAMES) }),
    ruleTextSchema,
    z.strictObject({ list: z.array(textValueSchema).max(MOST_LIST_ITEMS), join: z.enum(LIST_JOINS) }),
  ]),
);

export const ruleTextSchema: z.ZodType<RuleText> = z.lazy(() =>
  z.strictObject({
    code: z.enum(RULE_IDS),
    values: z.record(z.string().regex(/^\w+$/), textValueSchema).optional(),
  }),
);
