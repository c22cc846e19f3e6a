// The catalogue of rule messages: locales/en/rules.json, the source every language translates. A
// rule message is made as its code and values (text.ts `text`), never as a sentence, and rendered
// where it is shown (text.ts `renderText`): in English by the main process, the relay and the
// sandbox, in the agent's language by the window and the main process's dialogs.
// Pure: no i18next here (the main process and the relay have none).
import rules from './locales/en/rules.json';

type Catalogue = typeof rules;
type Group = Exclude<keyof Catalogue, 'terms'>;
/** "must_one" and "must_other" are one rule, "must", chosen by its count. */
type WithoutPlural<K> = K extends `${infer Base}_${'one' | 'other'}` ? Base : K;

/** A rule's id: "settings.versionSegment", "common.atMostCharacters" (a plural, chosen by `count`). */
export type RuleId = { [G in Group]: `${G}.${WithoutPlural<keyof Catalogue[G] & string>}` }[Group];
/** A word or phrase a rule takes as a value: a field's name, a shortcut's action, a purpose. */
export type RuleTerm = keyof Catalogue['terms'];

export const RULES: Readonly<Record<Group, Readonly<Record<string, string>>>> = rules;
export const RULE_TERMS: Readonly<Record<RuleTerm, string>> = rules.terms;

const PLURAL_SUFFIX = /_(zero|one|two|few|many|other)$/;

// RULES holds the terms too (its type leaves them out): they are values, not templates.
const GROUPS = Object.entries(RULES).filter(([group]) => group !== 'terms');

/** Every rule's id, a plural's forms once. */
export const RULE_IDS = [...new Set(GROUPS.flatMap(([group, entries]) => Object.keys(entries).map((key) => `${group}.${key.replace(PLURAL_SUFFIX, '')}`)))] as [RuleId, ...RuleId[]];
/** Every term's name. */
export const RULE_TERM_NAMES = Object.keys(RULE_TERMS) as [RuleTerm, ...RuleTerm[]];

const ENGLISH_PLURALS = new Intl.PluralRules('en');

/** The English template of a rule; a plural's form for `count`. */
export function ruleTemplate(id: RuleId, count?: number): string {
  const [group, key] = id.split('.') as [string, string];
  // An id from elsewhere (a lookup by key) may name no group.
  const entries: Readonly<Record<string, string>> | undefined = (RULES as Readonly<Record<string, Readonly<Record<string, string>>>>)[group];
  if (entries === undefined) return id;
  const plain = entries[key];
  if (plain !== undefined) return plain;
  const form = count === undefined ? 'other' : ENGLISH_PLURALS.select(count);
  return entries[`${key}_${form}`] ?? entries[`${key}_other`] ?? id;
}
