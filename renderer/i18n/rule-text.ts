// The rule messages of shared/'s schemas in the UI's language. shared/ writes them in English from
// one catalogue (shared/i18n/rules.ts, locales/en/rules.json), and so does the main process in the
// errors it sends back; shared/i18n/rule-text-core.ts finds the template that made a message and
// says it again, here with the window's `rules` namespace in the language it speaks now. The main
// process's own dialogs say them with the same core (electron/desktop/desktop-texts.ts `rule`).
import { createRuleTranslator } from '../../shared/i18n/rule-text-core';
import { directionOf, type UiLanguage } from '../../shared/i18n/languages';
import { isolateLtr } from './format';
import { i18n } from './i18n';

const sayRule = createRuleTranslator({
  // The keys are made from the catalogue itself; here they are only looked up. A fixed t with no
  // language follows the window's language at each call.
  translate: i18n.getFixedT(null, 'rules') as unknown as (key: string, values?: Readonly<Record<string, string | number>>) => string,
  rtl: () => directionOf(i18n.language as UiLanguage) === 'rtl',
  isolate: isolateLtr,
});

/**
 * A rule message in the UI's language now: `must end in the version segment, e.g. …` →
 * "debe terminar en el segmento de versión, p. ej., …". Handles what the window puts before a rule
 * (a field's path, "shortcuts.mute (Mute): ", "Phone number: "), several rules joined by "; ", values
 * that are the catalogue's own ("the file is a GIF image, not a PNG image") and the media check's
 * descriptions ("8-bit RGB PNG", "MP4: H.264 High with B-frames, AAC"). A message the catalogue did
 * not make comes back unchanged.
 */
export function translateRuleText(message: string): string {
  return sayRule(message);
}
