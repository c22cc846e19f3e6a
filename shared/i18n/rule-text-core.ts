// The rule messages of shared/'s schemas said again in another language, without i18next: each
// English template of the catalogue (rules.ts, locales/en/rules.json) is turned once into a pattern,
// and a message made from one is said again through the `translate` it is given, its values kept.
// The window (renderer/i18n/rule-text.ts) and the main process's own dialogs
// (electron/desktop/desktop-texts.ts) each give their i18next's `rules` namespace, so both say the
// same message in the same words. A value that is itself the catalogue's (a term, a template: "the
// file is a GIF image, not a PNG image" takes two) is said in the language too, and so is a list of
// names and catalogue words ("MP3, 44.1 kHz, mono"), as the media check's descriptions are. A
// message that no template made (the gateway's own words, a browser's reason) is shown as it came.
import { RULES, RULE_TERMS } from './rules';

/** How a rule translator reaches its language. */
export interface RuleTranslatorOptions {
  /**
   * The `rules` namespace in the language: `translate('phone.linkScheme', { scheme })`,
   * `translate('terms.phoneNumber')`; a plural's `count` is a number and picks the form.
   */
  translate: (key: string, values?: Readonly<Record<string, string | number>>) => string;
  /** Whether the language is right to left now (asked for each message: a window changes language). */
  rtl: () => boolean;
  /** Left-to-right data kept in its order inside a right-to-left sentence (LRI … PDI). */
  isolate: (text: string) => string;
}

/** Says an English rule message in the language; a message the catalogue did not make comes back unchanged. */
export type RuleTranslator = (message: string) => string;

interface RulePattern {
  /** "settings.versionSegment"; a plural's forms share one id. */
  id: string;
  regex: RegExp;
  /** The {{values}} in the order of the regex's groups (a value said twice is matched by a back-reference). */
  names: string[];
  /** How much of the template is fixed text: the most specific template is tried first. */
  fixed: number;
  /** The template starts with a small letter: a message that starts with a capital was made a sentence. */
  lowerStart: boolean;
}

const PLURAL_SUFFIX = /_(zero|one|two|few|many|other)$/;
const VALUE = /\{\{(\w+)\}\}/g;
const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * What a value must look like, by its name, where a template alone would take more than it made: a
 * plural's `count` and plain `digits` are digits ("MPEG-4 audio of object type {{digits}}" takes no
 * ", 44.1 kHz" after it); a `format` or a `video` track is one item of a description's list ("{{format}}
 * audio" does not take "H.264 Baseline, no audio", which is two); a list's `items` and `last`
 * (lists.or: extensions, MIME types) are names without spaces, so that "{{items}} or {{last}}" takes
 * no sentence that merely has "or" in it. Any other value is any text.
 */
const NAME = '[^\\s,]+';
const ITEM = '(?:(?!, | \\+ ).)+?';
const VALUE_SHAPES: Readonly<Record<string, string>> = { count: '\\d+', digits: '\\d+', format: ITEM, video: ITEM, items: `${NAME}(?:, ${NAME})*`, last: NAME };

function patternOf(id: string, template: string): RulePattern {
  const names: string[] = [];
  let source = '';
  let fixed = 0;
  let last = 0;
  for (const m of template.matchAll(VALUE)) {
    const text = template.slice(last, m.index);
    source += escapeRegex(text);
    fixed += text.length;
    const name = m[1]!;
    const seen = names.indexOf(name);
    if (seen >= 0) {
      source += `\\${seen + 1}`;
    } else {
      names.push(name);
      source += `(${VALUE_SHAPES[name] ?? '.*?'})`;
    }
    last = m.index + m[0].length;
  }
  const tail = template.slice(last);
  source += escapeRegex(tail);
  fixed += tail.length;
  // The window starts a sentence with a rule ("Must end in …"): the first letter may be either case.
  const first = /^\p{Ll}/u.test(source) ? `[${source[0]}${source[0]!.toUpperCase()}]` : '';
  return { id, regex: new RegExp(`^${first}${first ? source.slice(1) : source}$`, 's'), names, fixed, lowerStart: first !== '' };
}

// RULES holds the terms too (its type leaves them out): they are values, not templates.
const groups = Object.fromEntries(Object.entries(RULES).filter(([group]) => group !== 'terms'));
const terms: Readonly<Record<string, string>> = RULE_TERMS;

// Made once from the English catalogue, whoever translates.
const PATTERNS: readonly RulePattern[] = Object.entries(groups)
  .flatMap(([group, entries]) => Object.entries(entries).map(([key, template]) => patternOf(`${group}.${key.replace(PLURAL_SUFFIX, '')}`, template)))
  .sort((a, b) => b.fixed - a.fixed);

/** English term → its key: values such as "the API key" or "Mute" are said in the language too. */
const TERM_KEYS: ReadonlyMap<string, string> = new Map(Object.entries(terms).map(([key, text]) => [text, key]));

const startsUpper = (text: string): boolean => /^\p{Lu}/u.test(text);
const capitalise = (text: string): string => (text === '' ? text : text[0]!.toUpperCase() + text.slice(1));

/** How deep values inside values are said: a refusal, the file it names, the stream that names. */
const MOST_DEPTH = 8;

/** A field path as shared/validation.ts fieldPath writes it: `gatewayUrl`, `servers[1]`, `interactive.action.buttons`. */
const PATH = /^[\w$.[\]]+$/;

/** Units that stand after a number in a list of names ("44.1 kHz", "64 kbit/s", "1 s"). */
const UNITS: ReadonlySet<string> = new Set(['kHz', 'kbit/s', 's', 'ms']);

/** A name, not words: each word starts with a capital, a digit or a sign ("AAC (ADTS)", "H.264 Main", "\"mp4v\"") or is a unit. */
const isName = (item: string): boolean => item.split(' ').every((word) => UNITS.has(word) || !/^[([]*\p{Ll}/u.test(word));

/** Text cut at ", " and " + " outside brackets: items at even places, the separators between them. */
function listParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[') depth++;
    else if ((c === ')' || c === ']') && depth > 0) depth--;
    else if (depth === 0 && (text.startsWith(', ', i) || text.startsWith(' + ', i))) {
      const separator = text[i] === ',' ? ', ' : ' + ';
      parts.push(text.slice(from, i), separator);
      from = i + separator.length;
      i = from - 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

/**
 * A translator of rule messages: `must end in the version segment, e.g. …` → "debe terminar en el
 * segmento de versión, p. ej., …". Handles what a window puts before a rule (a field's path,
 * "shortcuts.mute (Mute): ", "Phone number: "), several rules joined by "; ", hints after " — ",
 * values that are the catalogue's own ("the file is a GIF image, not a PNG image") and the media
 * check's descriptions ("8-bit RGB PNG", "MP4: H.264 High with B-frames, AAC").
 */
export function createRuleTranslator({ translate, rtl, isolate }: RuleTranslatorOptions): RuleTranslator {
  const termText = (value: string): string | undefined => {
    const key = TERM_KEYS.get(value);
    return key === undefined ? undefined : translate(`terms.${key}`);
  };

  // In a right-to-left sentence a number, a key combination, an address or a name must keep its own order.
  const asName = (text: string): string => (rtl() && text !== '' ? isolate(text) : text);

  /** A value in the language: a term, or the catalogue's own message (said again, one level deeper); else as it came. */
  const valueText = (value: string, depth: number): string => termText(value) ?? (value === '' ? undefined : translateDepth(value, depth + 1)) ?? asName(value);

  /** One message made from one template; undefined when no template made it. */
  function fromTemplate(message: string, depth: number): string | undefined {
    for (const pattern of PATTERNS) {
      // A plural's count is a number (VALUE_SHAPES): text that only looks like the template is not from it.
      const m = pattern.regex.exec(message);
      if (!m) continue;
      const values: Record<string, string | number> = {};
      pattern.names.forEach((name, i) => {
        const value = m[i + 1] ?? '';
        values[name] = name === 'count' ? Number(value) : valueText(value, depth);
      });
      const text = translate(pattern.id, values);
      // "Must …" stays a sentence's start in every language that has capitals.
      return pattern.lowerStart && startsUpper(message) ? capitalise(text) : text;
    }
    return undefined;
  }

  /** A prefix before ": " a window shows: a path, a path with the action's name ("shortcuts.mute (Mute)"), or a term ("Phone number"). */
  function prefixText(prefix: string): string | undefined {
    const term = termText(prefix);
    if (term !== undefined) return term;
    if (PATH.test(prefix)) return prefix;
    const named = /^([\w$.[\]]+) \((.+)\)$/s.exec(prefix);
    const label = named ? termText(named[2]!) : undefined;
    return named && label !== undefined ? `${named[1]} (${label})` : undefined;
  }

  /**
   * A list as the media check describes a file ("MP3, 44.1 kHz, mono, 64 kbit/s", "MP4: H.264 High with
   * B-frames, AAC"): each item the catalogue made is said in the language, the others are names. Only
   * a list of names and catalogue items, with one of the latter at least, is the catalogue's: a
   * sentence with a comma in it is not taken apart.
   */
  function fromList(text: string, depth: number): string | undefined {
    const parts = listParts(text);
    if (parts.length < 3) return undefined;
    let said = false;
    const out: string[] = [];
    for (const [i, part] of parts.entries()) {
      if (i % 2 === 1) {
        out.push(part);
        continue;
      }
      const item = termText(part) ?? translateDepth(part, depth + 1);
      if (item === undefined && !isName(part)) return undefined;
      said ||= item !== undefined;
      out.push(item ?? asName(part));
    }
    return said ? out.join('') : undefined;
  }

  function translateDepth(message: string, depth: number): string | undefined {
    if (depth > MOST_DEPTH) return undefined;
    // Hints after " — ", each from the catalogue and joined by "; " (shared/templates.ts on pasted JSON).
    const dash = message.lastIndexOf(' — ');
    if (dash > 0) {
      const hints = message.slice(dash + 3).split('; ').map((hint) => fromTemplate(hint, depth + 1));
      const head = translateDepth(message.slice(0, dash), depth + 1);
      if (head !== undefined && hints.every((h) => h !== undefined)) return `${head} — ${hints.join('; ')}`;
    }
    // Several fields' rules, "path: rule; path: rule" (shared/validation.ts parseWith).
    const parts = message.split(/; (?=[\w$.[\]]+(?: \([^)]*\))?: )/);
    if (parts.length > 1) {
      const said = parts.map((part) => translateDepth(part, depth + 1));
      if (said.some((s) => s !== undefined)) return said.map((s, i) => s ?? parts[i]).join('; ');
    }
    // The prefix first: a template that starts with a value ("{{combo}} is kept for …") would take it in.
    const colon = message.indexOf(': ');
    if (colon > 0) {
      const prefix = prefixText(message.slice(0, colon));
      const rest = prefix === undefined ? undefined : translateDepth(message.slice(colon + 2), depth + 1);
      if (prefix !== undefined && rest !== undefined) return `${prefix}: ${rest}`;
    }
    return fromTemplate(message, depth) ?? fromList(message, depth);
  }

  return (message) => translateDepth(message, 0) ?? message;
}
