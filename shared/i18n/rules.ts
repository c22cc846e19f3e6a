// The rule messages of shared/'s schemas and checks, made from one catalogue: locales/en/rules.json.
// The main process returns and logs them in English; the window finds the same entry again in the
// English text (renderer/i18n/rule-text.ts) and says it in the agent's language. So a message that
// a window may show is written here, never as a literal next to its rule.
// Pure: no i18next here (the main process and the relay have none), a plain {{name}} replace.
import rules from './locales/en/rules.json';

type Catalogue = typeof rules;
type Group = Exclude<keyof Catalogue, 'terms'>;
/** "must_one" and "must_other" are one rule, "must", chosen by its count. */
type WithoutPlural<K> = K extends `${infer Base}_${'one' | 'other'}` ? Base : K;

/** A rule's id: "settings.versionSegment", "common.atMostCharacters" (a plural, chosen by `count`). */
export type RuleId = { [G in Group]: `${G}.${WithoutPlural<keyof Catalogue[G] & string>}` }[Group];
/** A word or phrase a rule takes as a value: a field's name, a shortcut's action, a purpose. */
export type RuleTerm = keyof Catalogue['terms'];

export type RuleValues = Readonly<Record<string, string | number>>;

export const RULES: Readonly<Record<Group, Readonly<Record<string, string>>>> = rules;
export const RULE_TERMS: Readonly<Record<RuleTerm, string>> = rules.terms;

const ENGLISH_PLURALS = new Intl.PluralRules('en');

/** The English template of a rule; a plural's form for `count`. */
export function ruleTemplate(id: RuleId, count?: number): string {
  const [group, key] = id.split('.') as [Group, string];
  const entries = RULES[group];
  const plain = entries[key];
  if (plain !== undefined) return plain;
  const form = count === undefined ? 'other' : ENGLISH_PLURALS.select(count);
  return entries[`${key}_${form}`] ?? entries[`${key}_other`] ?? id;
}

/** A rule's English message, its {{values}} filled in: rule('settings.versionSegment', { example }). */
export function rule(id: RuleId, values: RuleValues = {}): string {
  const count = typeof values.count === 'number' ? values.count : undefined;
  return ruleTemplate(id, count).replace(/\{\{(\w+)\}\}/g, (whole, name: string) => (Object.hasOwn(values, name) ? String(values[name]) : whole));
}

/** A term's English words, to pass as a rule's value: term('apiKey') → "the API key". */
export const term = (name: RuleTerm): string => RULE_TERMS[name];
