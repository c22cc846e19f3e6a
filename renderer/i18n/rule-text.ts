// The rule messages of shared/'s schemas in the agent's language. shared/ writes them in English
// from one catalogue (shared/i18n/rules.ts, locales/en/rules.json), and so does the main process in
// the errors it sends back; here each English template is turned once into a pattern, and a message
// made from one is said again with the `rules` namespace, its values kept. A message that no
// template made (the gateway's own words, a browser's reason) is shown as it came.
import english from '../../shared/i18n/locales/en/rules.json';
import { directionOf, type UiLanguage } from '../../shared/i18n/languages';
import { isolateLtr } from './format';
import { i18n } from './i18n';

// The keys are made from the catalogue itself; here they are only looked up.
const translate = i18n.getFixedT(null, 'rules') as unknown as (key: string, values?: Record<string, unknown>) => string;

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
      source += '(.*?)';
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

type Tree = Readonly<Record<string, Readonly<Record<string, string>>>>;
const { terms, ...groups } = english as unknown as Tree & { terms: Readonly<Record<string, string>> };

const PATTERNS: readonly RulePattern[] = Object.entries(groups)
  .flatMap(([group, entries]) => Object.entries(entries).map(([key, template]) => patternOf(`${group}.${key.replace(PLURAL_SUFFIX, '')}`, template)))
  .sort((a, b) => b.fixed - a.fixed);

/** English term → its key: values such as "the API key" or "Mute" are said in the language too. */
const TERM_KEYS: ReadonlyMap<string, string> = new Map(Object.entries(terms).map(([key, text]) => [text, key]));

const termText = (value: string): string | undefined => {
  const key = TERM_KEYS.get(value);
  return key === undefined ? undefined : translate(`terms.${key}`);
};

const startsUpper = (text: string): boolean => /^\p{Lu}/u.test(text);
const capitalise = (text: string): string => (text === '' ? text : text[0]!.toUpperCase() + text.slice(1));

/** One message made from one template; undefined when no template made it. */
function fromTemplate(message: string): string | undefined {
  // In a right-to-left sentence a number, a key combination or an address must keep its own order.
  const rtl = directionOf(i18n.language as UiLanguage) === 'rtl';
  for (const pattern of PATTERNS) {
    const m = pattern.regex.exec(message);
    if (!m) continue;
    const countAt = pattern.names.indexOf('count');
    // A plural's count is a number: text that only looks like the template is not from it.
    if (countAt >= 0 && !/^\d+$/.test(m[countAt + 1] ?? '')) continue;
    const values: Record<string, string | number> = {};
    pattern.names.forEach((name, i) => {
      const value = m[i + 1] ?? '';
      if (name === 'count') values[name] = Number(value);
      else values[name] = termText(value) ?? (rtl && value !== '' ? isolateLtr(value) : value);
    });
    const text = translate(pattern.id, values);
    // "Must …" stays a sentence's start in every language that has capitals.
    return pattern.lowerStart && startsUpper(message) ? capitalise(text) : text;
  }
  return undefined;
}

/** A field path as shared/validation.ts fieldPath writes it: `gatewayUrl`, `servers[1]`, `interactive.action.buttons`. */
const PATH = /^[\w$.[\]]+$/;
/** A prefix before ": " the window shows: a path, a path with the action's name ("shortcuts.mute (Mute)"), or a term ("Phone number"). */
function prefixText(prefix: string): string | undefined {
  const term = termText(prefix);
  if (term !== undefined) return term;
  if (PATH.test(prefix)) return prefix;
  const named = /^([\w$.[\]]+) \((.+)\)$/s.exec(prefix);
  const label = named ? termText(named[2]!) : undefined;
  return named && label !== undefined ? `${named[1]} (${label})` : undefined;
}

function translateDepth(message: string, depth: number): string | undefined {
  if (depth > 3) return undefined;
  // Hints after " — ", each from the catalogue and joined by "; " (shared/templates.ts on pasted JSON).
  const dash = message.lastIndexOf(' — ');
  if (dash > 0) {
    const hints = message.slice(dash + 3).split('; ').map(fromTemplate);
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
  return fromTemplate(message);
}

/**
 * A rule message in the UI's language now: `must end in the version segment, e.g. …` →
 * "debe terminar en el segmento de versión, p. ej., …". Handles what the window puts before a rule
 * (a field's path, "shortcuts.mute (Mute): ", "Phone number: ") and several rules joined by "; ".
 * A message the catalogue did not make comes back unchanged.
 */
export function translateRuleText(message: string): string {
  return translateDepth(message, 0) ?? message;
}
