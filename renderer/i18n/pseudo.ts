// The pseudo-locale (shared/i18n/languages.ts PSEUDO_LANGUAGE): English made visibly foreign but
// still readable, so that any text on screen that is not bracketed bypassed translation.

const ACCENTED: Readonly<Record<string, string>> = Object.fromEntries(
  [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'].map((c, i) => [c, [...'åƀçđéƒĝĥîĵķļɱñöþǫŕšţûṽŵẋýžÅƁÇĐÉƑĜĤÎĴĶĻṀÑÖÞǪŔŠŢÛṼŴẊÝŽ'][i] ?? c]),
);

export const PSEUDO_OPEN = '⟦';
export const PSEUDO_CLOSE = '⟧';

/** What must survive as written: i18next interpolations and nestings, and Trans's numbered tags. */
const KEEP = /(\{\{[^}]*\}\}|\$t\([^)]*\)|<\/?\d+\/?>)/;

export function pseudoLocalize(text: string): string {
  const body = text
    .split(KEEP)
    .map((part, i) => (i % 2 === 1 ? part : [...part].map((c) => ACCENTED[c] ?? c).join('')))
    .join('');
  return `${PSEUDO_OPEN}${body}${PSEUDO_CLOSE}`;
}

/** The same tree of strings, each one pseudo-localized. */
export function pseudoResources<T>(tree: T): T {
  if (typeof tree === 'string') return pseudoLocalize(tree) as T;
  if (tree && typeof tree === 'object') return Object.fromEntries(Object.entries(tree).map(([k, v]) => [k, pseudoResources(v)])) as T;
  return tree;
}
