// The window's build: what it loads at start holds English only; each other language is a chunk of
// its own that nothing at start names. Read off the real build (npm test builds before it tests).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeWindowWeight, filesNamedBy, measureWindowWeight } from '../../../bench/window-weight';
import { LANGUAGES } from '../../../shared/i18n/languages';
import en from '../../../shared/i18n/locales/en/index';
import es from '../../../shared/i18n/locales/es/index';
import ptBR from '../../../shared/i18n/locales/pt-BR/index';
import hi from '../../../shared/i18n/locales/hi/index';
import id from '../../../shared/i18n/locales/id/index';
import ar from '../../../shared/i18n/locales/ar/index';

const DIST = join('dist', 'renderer');
const CATALOGUES = { en, es, 'pt-BR': ptBR, hi, id, ar } as const;

/** Every string of a catalogue. */
const strings = (tree: unknown): string[] =>
  typeof tree === 'string' ? [tree] : tree !== null && typeof tree === 'object' ? Object.values(tree).flatMap(strings) : [];

/** The longest plain sentence of a language that English does not have (no quotes or markup a bundler may escape). */
function distinctive(language: keyof typeof CATALOGUES): string {
  const english = new Set(strings(en));
  const own = strings(CATALOGUES[language]).filter((s) => !english.has(s) && !/["'\\{}<>`$]/.test(s));
  return own.sort((a, b) => b.length - a.length)[0]!;
}

describe('the window at start and on demand', () => {
  it('names scripts, modulepreloads and stylesheets, nothing else', () => {
    const html = `<script type="module" crossorigin src="./assets/index-A.js"></script>
      <link rel="modulepreload" crossorigin href="./assets/react-B.js">
      <link rel="stylesheet" crossorigin href="./assets/index-C.css">
      <link rel="icon" href="./favicon.png">`;
    expect(filesNamedBy(html)).toEqual(['assets/index-A.js', 'assets/react-B.js', 'assets/index-C.css']);
  });

  it('starts with English only; every other language comes in a chunk of its own', async () => {
    const weight = await measureWindowWeight(DIST);
    const read = async (files: { file: string }[]) => (await Promise.all(files.map((f) => readFile(join(DIST, f.file), 'utf8')))).join('\n');
    const atStart = await read(weight.atStart);
    expect(atStart).toContain(en.rules.callMedia.networkLost);
    for (const language of LANGUAGES.filter((l) => l !== 'en')) {
      const text = distinctive(language);
      expect(text.length, language).toBeGreaterThan(30);
      expect(atStart, language).not.toContain(text);
      const chunks = await Promise.all(weight.onDemand.map(async (f) => ({ file: f.file, text: await read([f]) })));
      expect(chunks.filter((c) => c.text.includes(text)).map((c) => c.file), language).toHaveLength(1);
    }
    expect(describeWindowWeight(weight)[0]).toMatch(/^window at start, gzipped +\d+\.\d KB/);
  });
});
