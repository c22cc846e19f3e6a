// A rule message travels as its code and values (shared/i18n/text.ts) and one renderer says it:
// in English, byte for byte what the catalogue's templates make; in every other language through a
// lookup in that language's catalogue, every value of the catalogue's own (a term, a nested rule, a
// list's joins) said in it too, data kept as it is (and left to right when asked), plurals by count.
// And zod's issues carry the text to parseWith, which makes the invalid_input error of it.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LANGUAGES, type Language } from '../../../shared/i18n/languages';
import arabic from '../../../shared/i18n/locales/ar/rules.json';
import english from '../../../shared/i18n/locales/en/rules.json';
import spanish from '../../../shared/i18n/locales/es/rules.json';
import hindi from '../../../shared/i18n/locales/hi/rules.json';
import indonesian from '../../../shared/i18n/locales/id/rules.json';
import portuguese from '../../../shared/i18n/locales/pt-BR/rules.json';
import { RULE_IDS, RULE_TERM_NAMES, type RuleId, type RuleTerm } from '../../../shared/i18n/rules';
import {
  english as inEnglish,
  englishLookup,
  fieldRule,
  list,
  mapStrings,
  orList,
  renderText,
  rule,
  ruleTextSchema,
  term,
  text,
  textValueSchema,
  type TextLookup,
  type TextValue,
} from '../../../shared/i18n/text';
import { encodeText, fieldError, invalidInput, issueEnglish, issueText, parseWith, ruleMessage } from '../../../shared/validation';

type Catalogue = Record<string, Record<string, string>>;
const CATALOGUES: Readonly<Record<Language, Catalogue>> = {
  en: english,
  es: spanish,
  'pt-BR': portuguese,
  hi: hindi,
  id: indonesian,
  ar: arabic,
} as unknown as Readonly<Record<Language, Catalogue>>;

const PLURAL_SUFFIX = /_(zero|one|two|few|many|other)$/;
const slotsOf = (template: string): string[] => [...new Set([...template.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!))];
const fill = (template: string, values: Readonly<Record<string, string | number>>): string =>
  template.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => (Object.hasOwn(values, name) ? String(values[name]) : whole));

/** A language's template for a rule, a plural's form by the language's own rules: what an i18next lookup does. */
function templateIn(language: Language, id: string, count?: number): string {
  const dot = id.indexOf('.');
  const entries = CATALOGUES[language][id.slice(0, dot)]!;
  const key = id.slice(dot + 1);
  const plain = entries[key];
  if (plain !== undefined) return plain;
  const form = count === undefined ? 'other' : new Intl.PluralRules(language).select(count);
  const found = entries[`${key}_${form}`] ?? entries[`${key}_other`];
  if (found === undefined) throw new Error(`${language} has no ${id}`);
  return found;
}

/** A plain lookup in a language's catalogue, without i18next. */
const lookupIn =
  (language: Language): TextLookup =>
  (key, values = {}) =>
    fill(templateIn(language, key, typeof values.count === 'number' ? values.count : undefined), values);

/** The English message before texts were values: the template, its values filled in as strings (the old shared/i18n/rules.ts `rule`). */
const oldRule = (id: RuleId, values: Readonly<Record<string, string | number>> = {}): string =>
  fill(templateIn('en', id, typeof values.count === 'number' ? values.count : undefined), values);

/** Every rule's id with its slots; a plural once per English form (count 1 and 7). */
function everyRule(): { id: RuleId; slots: string[]; count?: number }[] {
  const out: { id: RuleId; slots: string[]; count?: number }[] = [];
  for (const [group, entries] of Object.entries(english)) {
    if (group === 'terms') continue;
    for (const [key, template] of Object.entries(entries as Record<string, string>)) {
      const plural = PLURAL_SUFFIX.exec(key);
      const id = `${group}.${key.replace(PLURAL_SUFFIX, '')}` as RuleId;
      out.push({ id, slots: slotsOf(template), ...(plural ? { count: plural[1] === 'one' ? 1 : 7 } : {}) });
    }
  }
  return out;
}
const RULES = everyRule();
const TERMS = Object.keys(english.terms) as RuleTerm[];

describe('the catalogue', () => {
  it('lists every rule and term once, and every language has each of them', () => {
    expect(new Set(RULE_IDS)).toEqual(new Set(RULES.map((r) => r.id)));
    expect(RULE_TERM_NAMES).toEqual(TERMS);
    for (const language of LANGUAGES) {
      for (const { id, count } of RULES) expect(() => templateIn(language, id, count), `${language} ${id}`).not.toThrow();
      for (const name of TERMS) expect(CATALOGUES[language].terms?.[name], `${language} terms.${name}`).toBeTypeOf('string');
    }
  });
});

describe('in English', () => {
  it('every rule renders exactly as its template filled in, with data, numbers and a plural count', () => {
    expect(RULES.length).toBeGreaterThan(250);
    for (const { id, slots, count } of RULES) {
      const values: Record<string, string | number> = {};
      for (const name of slots) values[name] = name === 'count' ? (count ?? 7) : name === 'digits' ? 42 : `v-${name}-9`;
      expect(rule(id, values), id).toBe(oldRule(id, values));
      expect(inEnglish(text(id, values)), id).toBe(oldRule(id, values));
    }
  });

  it('every rule renders its values of the catalogue (terms, nested rules, lists) as their own English, in place', () => {
    const nested = text('mediaFile.imageA', { format: 'GIF' });
    const listed = list(['MP3', '44.1 kHz', term('mono')]);
    for (const { id, slots, count } of RULES) {
      for (const [i, name] of TERMS.entries()) {
        const values: Record<string, TextValue> = {};
        const said: Record<string, string | number> = {};
        slots.forEach((slot, k) => {
          if (slot === 'count') {
            values[slot] = count ?? 7;
            said[slot] = count ?? 7;
            return;
          }
          // Each slot in turn: a term, a nested rule, a list.
          const kind = (i + k) % 3;
          values[slot] = kind === 0 ? term(name) : kind === 1 ? nested : listed;
          said[slot] = kind === 0 ? english.terms[name] : kind === 1 ? 'a GIF image' : 'MP3, 44.1 kHz, mono';
        });
        expect(inEnglish(text(id, values)), `${id} with ${name}`).toBe(oldRule(id, said));
        if (slots.length === 0) break;
      }
    }
  });

  it('joins lists with the catalogue’s punctuation; "or" before the last of several', () => {
    expect(inEnglish(list(['a', 'b', 'c']))).toBe('a, b, c');
    expect(inEnglish(list(['H.264 High', 'VP9'], 'plus'))).toBe('H.264 High + VP9');
    expect(inEnglish(list([fieldRule('a', 'x'), fieldRule('b', 'y')], 'semicolon'))).toBe('a: x; b: y');
    expect(inEnglish(orList(['.jpeg', '.jpg', '.png']))).toBe('.jpeg, .jpg or .png');
    expect(inEnglish(orList(['.png']))).toBe('.png');
    expect(inEnglish(orList([]))).toBe('');
  });

  it('a string alone is words of no catalogue, as they are; a number is its digits', () => {
    expect(renderText('The gateway is down', englishLookup)).toBe('The gateway is down');
    expect(renderText('The gateway is down', englishLookup, { isolate: (t) => `[${t}]` })).toBe('The gateway is down');
    expect(renderText(42, englishLookup)).toBe('42');
  });
});

describe('in every language', () => {
  const OTHERS = LANGUAGES.filter((language) => language !== 'en');

  it('every rule is its own template, data kept', () => {
    for (const language of OTHERS) {
      const say = lookupIn(language);
      for (const { id, slots, count } of RULES) {
        const values: Record<string, string | number> = {};
        for (const name of slots) values[name] = name === 'count' ? (count ?? 7) : `v-${name}-9`;
        const said = renderText(text(id, values), say);
        expect(said, `${language} ${id}`).toBe(fill(templateIn(language, id, count), values));
        for (const [name, value] of Object.entries(values)) if (name !== 'count') expect(said, `${language} ${id} keeps ${name}`).toContain(String(value));
      }
    }
  });

  it('every value of the catalogue’s own is said in the language: no English term, nested rule or join is left', () => {
    const nested = text('mediaFile.imageA', { format: 'GIF' });
    const listed = list([term('mono'), term('stereo')], 'plus');
    for (const language of OTHERS) {
      const say = lookupIn(language);
      const own = CATALOGUES[language];
      for (const { id, slots, count } of RULES) {
        if (slots.every((slot) => slot === 'count')) continue;
        for (const [i, name] of TERMS.entries()) {
          const values: Record<string, TextValue> = {};
          const said: Record<string, string | number> = {};
          slots.forEach((slot, k) => {
            if (slot === 'count') {
              values[slot] = count ?? 7;
              said[slot] = count ?? 7;
              return;
            }
            const kind = (i + k) % 3;
            values[slot] = kind === 0 ? term(name) : kind === 1 ? nested : listed;
            said[slot] =
              kind === 0
                ? own.terms![name]!
                : kind === 1
                  ? fill(templateIn(language, 'mediaFile.imageA'), { format: 'GIF' })
                  : `${own.terms!.mono!}${own.lists!.plus!}${own.terms!.stereo!}`;
          });
          expect(renderText(text(id, values), say), `${language} ${id} with ${name}`).toBe(fill(templateIn(language, id, count), said));
        }
      }
    }
  });

  it('a plural takes the language’s own form for its count', () => {
    const ar = lookupIn('ar');
    expect(renderText(text('messages.atMostButtons', { count: 3 }), ar)).toBe('يجب ألا يتجاوز 3 أزرار');
    expect(renderText(text('common.atMostCharacters', { count: 20 }), ar)).toBe('يجب ألا يتجاوز 20 حرفًا');
    expect(renderText(text('phone.linkTooLong', { count: 512 }), ar)).toBe(arabic.phone.linkTooLong_many.replace('{{count}}', '512'));
    expect(renderText(text('messages.atLeastMinutes', { count: 1 }), lookupIn('es'))).toBe('debe ser al menos 1 minuto');
    expect(renderText(text('common.atMostCharacters', { count: 1 }), lookupIn('es'))).toBe(spanish.common.atMostCharacters_one.replace('{{count}}', '1'));
  });

  it('keeps data left to right when asked (a right-to-left language): strings and numbers, not a plural’s count nor the catalogue’s words', () => {
    const isolate = (t: string): string => `\u2066${t}\u2069`;
    const ar = lookupIn('ar');
    const refusal = fieldRule(term('phoneNumber'), text('phone.linkScheme', { scheme: 'http' }));
    expect(renderText(refusal, ar, { isolate })).toBe(`${arabic.terms.phoneNumber}: ${arabic.phone.linkScheme.replace('{{scheme}}', '\u2066http\u2069')}`);
    expect(renderText(refusal, ar)).toBe(`${arabic.terms.phoneNumber}: ${arabic.phone.linkScheme.replace('{{scheme}}', 'http')}`);
    expect(renderText(text('phone.linkTooLong', { count: 512 }), ar, { isolate })).not.toContain('\u2066');
    const gray = text('media.imageDepthColour', { description: text('mediaFile.png', { depth: 8, colour: term('grayscale') }) });
    expect(renderText(gray, ar, { isolate })).toContain('\u20668\u2069');
    expect(renderText(gray, ar, { isolate })).not.toContain(`\u2066${arabic.terms.grayscale}`);
    // Each item of a list is data of its own; an empty value needs no isolate.
    expect(renderText(list(['MP3', term('mono')]), ar, { isolate })).toBe(`\u2066MP3\u2069, ${arabic.terms.mono}`);
    expect(renderText(text('common.literal', { value: '' }), ar, { isolate })).toBe(arabic.common.literal.replace('{{value}}', ''));
  });
});

describe('a text as data', () => {
  it('is plain JSON, checked where it enters a process', () => {
    const value = text('media.notFormat', { what: text('mediaFile.imageA', { format: 'GIF' }), expected: orList(['.png', term('mediaImage'), 3]) });
    const copy: unknown = JSON.parse(JSON.stringify(value));
    expect(ruleTextSchema.parse(copy)).toEqual(value);
    expect(textValueSchema.safeParse({ code: 'no.suchRule' }).success).toBe(false);
    expect(textValueSchema.safeParse({ term: 'noSuchTerm' }).success).toBe(false);
    expect(textValueSchema.safeParse({ list: ['a'], join: 'dash' }).success).toBe(false);
    expect(textValueSchema.safeParse({ code: 'media.empty', values: { what: { evil: true } } }).success).toBe(false);
  });

  it('has its strings changed, codes and terms kept (a link’s query cut off)', () => {
    const value = fieldRule('content.image.link', text('mediaFetch.redirectLoop', { url: 'https://e.com/a?sig=1', extra: list([term('mono'), 'x?y', 3]) }));
    expect(mapStrings(value, (s) => s.replace(/\?.*$/, ''))).toEqual(
      fieldRule('content.image.link', text('mediaFetch.redirectLoop', { url: 'https://e.com/a', extra: list([term('mono'), 'x', 3]) })),
    );
  });
});

describe('zod issues and parseWith', () => {
  const schema = z.strictObject({
    name: z.string({ error: ruleMessage('common.requiredString') }).min(1, ruleMessage('common.notEmpty')),
    size: z.number().max(3, ruleMessage('common.atMostCharacters', { count: 3 })),
    plain: z.number().optional(),
  });

  it('an issue carries its rule’s code and values; zod’s own words come as they are', () => {
    const parsed = schema.safeParse({ name: '', size: 9, plain: 'x' });
    expect(parsed.success).toBe(false);
    if (parsed.success) return;
    const [empty, long, plain] = parsed.error.issues;
    expect(issueText(empty!)).toEqual(text('common.notEmpty'));
    expect(issueText(long!)).toEqual(text('common.atMostCharacters', { count: 3 }));
    expect(issueEnglish(long!)).toBe('must be at most 3 characters');
    expect(issueText(plain!)).toBe(plain!.message);
    expect(issueText({ message: encodeText(text('common.notEmpty')).slice(0, -2) })).toBe(encodeText(text('common.notEmpty')).slice(0, -2));
  });

  it('parseWith: the English message as before, its text, and each field’s rule', () => {
    const one = parseWith(schema, { name: '', size: 1 });
    expect(one).toEqual({
      ok: false,
      error: {
        code: 'invalid_input',
        message: 'name: must not be empty',
        field: 'name',
        text: fieldRule('name', text('common.notEmpty')),
        issues: [{ field: 'name', text: text('common.notEmpty') }],
      },
    });
    const two = parseWith(schema, { size: 9 });
    expect(two.ok).toBe(false);
    if (two.ok) return;
    expect(two.error.message).toBe('name: is required and must be a string; size: must be at most 3 characters');
    expect(two.error.field).toBe('name');
    expect(two.error.issues).toEqual([
      { field: 'name', text: text('common.requiredString') },
      { field: 'size', text: text('common.atMostCharacters', { count: 3 }) },
    ]);
    expect(inEnglish(two.error.text!)).toBe(two.error.message);
  });

  it('invalidInput and fieldError make the same shapes for rules found by hand', () => {
    const error = invalidInput([{ field: 'a', text: text('common.required') }, { field: 'b', text: 'zod’s own words' }]);
    expect(!error.ok && error.error.message).toBe('a: is required; b: zod’s own words');
    const labelled = fieldError('invalid_phone_number', 'to', text('phone.tooShort'), { label: term('phoneNumber') });
    expect(labelled).toEqual({
      ok: false,
      error: {
        code: 'invalid_phone_number',
        message: 'Phone number: too short',
        field: 'to',
        text: fieldRule(term('phoneNumber'), text('phone.tooShort')),
        issues: [{ field: 'to', text: text('phone.tooShort') }],
      },
    });
  });
});
