// `npm run bench` (first part): the window's weight — what the page loads at start (index.html, the
// scripts and stylesheets it names, modulepreloads included), gzipped as a server would send it, and
// apart, the chunks it loads only on demand (each language but English).
//
//   tsx bench/window-weight.ts [dist/renderer]   (after `npm run build:renderer`)
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

/** What the window starts with may weigh at most this much, gzipped. */
export const START_GZIP_GOAL_BYTES = 300 * 1024;

export interface FileWeight {
  file: string;
  bytes: number;
  gzip: number;
}

export interface WindowWeight {
  atStart: FileWeight[];
  onDemand: FileWeight[];
}

/** The files index.html makes the page load: its scripts, modulepreloads and stylesheets. */
export function filesNamedBy(html: string): string[] {
  const named = new Set<string>();
  for (const m of html.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)="\.\/([^"]+)"[^>]*>/g)) {
    const tag = m[0];
    if (tag.startsWith('<script') || /rel="(?:modulepreload|stylesheet)"/.test(tag)) named.add(m[1]!);
  }
  return [...named];
}

async function weigh(dir: string, file: string): Promise<FileWeight> {
  const bytes = await readFile(join(dir, file));
  return { file, bytes: bytes.length, gzip: gzipSync(bytes).length };
}

export async function measureWindowWeight(dir: string): Promise<WindowWeight> {
  const html = await readFile(join(dir, 'index.html'), 'utf8');
  const named = filesNamedBy(html);
  const atStart = [await weigh(dir, 'index.html'), ...(await Promise.all(named.map((file) => weigh(dir, file))))];
  const scripts = (await readdir(join(dir, 'assets'))).filter((name) => name.endsWith('.js')).map((name) => `assets/${name}`);
  const onDemand = await Promise.all(scripts.filter((file) => !named.includes(file)).map((file) => weigh(dir, file)));
  return { atStart, onDemand };
}

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

export function describeWindowWeight(weight: WindowWeight): string[] {
  const sum = (files: FileWeight[], key: 'bytes' | 'gzip') => files.reduce((total, f) => total + f[key], 0);
  const startGzip = sum(weight.atStart, 'gzip');
  const verdict = startGzip <= START_GZIP_GOAL_BYTES ? 'meets' : 'MISSES';
  return [
    `${'window at start, gzipped'.padEnd(52)} ${kb(startGzip).padStart(10)}  (${kb(sum(weight.atStart, 'bytes'))} raw, ${weight.atStart.length} files; goal ≤ ${kb(START_GZIP_GOAL_BYTES)}: ${verdict})`,
    ...weight.atStart.map((f) => `  ${f.file.padEnd(50)} ${kb(f.gzip).padStart(10)}  (${kb(f.bytes)} raw)`),
    `${'loaded on demand (languages), gzipped'.padEnd(52)} ${kb(sum(weight.onDemand, 'gzip')).padStart(10)}  (${weight.onDemand.length} files, the largest ${kb(Math.max(0, ...weight.onDemand.map((f) => f.gzip)))})`,
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = process.argv[2] ?? join('dist', 'renderer');
  for (const line of describeWindowWeight(await measureWindowWeight(dir))) console.log(line);
}
