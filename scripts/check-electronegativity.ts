// The Electron security scan (`npm run security:scan`, run by .ci/run): Doyensec's Electronegativity
// over electron/ and renderer/, judged against electronegativity-allow.json.
//
//   tsx scripts/check-electronegativity.ts   → every finding printed; exit 1 on a MEDIUM or HIGH
//                                              finding the allow-list does not name, or on an entry
//                                              that names nothing any more
//
// Electronegativity itself exits 0 whatever it finds, so its CSV report is read here. Both folders
// are copied side by side into one temporary folder and scanned together: the CSP checks then see the
// page's meta tag and the main process in one run, and the report names files as `electron/…` and
// `renderer/…`, the way the allow-list does. The Electron version is the installed one (the folders
// hold no package.json to find it in). AvailableSecurityFixesGlobalCheck is left out: it downloads
// Electron's release list, and CI has no network but the package registries.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

export const SEVERITIES = ['INFORMATIONAL', 'LOW', 'MEDIUM', 'HIGH'] as const;
export type Severity = (typeof SEVERITIES)[number];
/** The severities that fail the scan unless the allow-list names the finding. */
export const BLOCKING_SEVERITIES: readonly Severity[] = ['MEDIUM', 'HIGH'];

export const CONFIDENCES = ['TENTATIVE', 'FIRM', 'CERTAIN'] as const;
export type Confidence = (typeof CONFIDENCES)[number];

/** One row of Electronegativity's CSV report. */
export interface Finding {
  /** The check's id, e.g. AUXCLICK_JS_CHECK. */
  check: string;
  severity: Severity;
  confidence: Confidence;
  /** Relative to the scanned folder (`electron/desktop/desktop-app.ts`), or N/A for an app-wide finding. */
  file: string;
  /** line:column */
  location: string;
  sample: string;
  description: string;
}

/** The header line Electronegativity 1.10 writes; anything else is a report this script cannot read. */
export const CSV_HEADER = ['issue', 'severity', 'confidence', 'filename', 'location', 'sample', 'description', 'url'] as const;

const allowEntrySchema = z.strictObject({
  check: z.string().regex(/^[A-Z0-9_]+$/, 'a check id such as PRELOAD_JS_CHECK'),
  file: z.string().min(1),
  reason: z.string().trim().min(20, 'say why the finding is acceptable, and where that is tested'),
});
export type AllowEntry = z.infer<typeof allowEntrySchema>;

const allowListSchema = z.array(allowEntrySchema);

/** Splits CSV text into records: fields separated by commas, quoted with `"` (a doubled `""` inside is one quote). */
export function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const endField = () => {
    record.push(field);
    field = '';
  };
  const endRecord = () => {
    endField();
    records.push(record);
    record = [];
  };
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i += 1;
      continue;
    }
    if (c === '"' && field === '') quoted = true;
    else if (c === ',') endField();
    else if (c === '\n' || c === '\r') {
      endRecord();
      if (c === '\r' && text[i + 1] === '\n') i += 1;
    } else field += c;
    i += 1;
  }
  if (quoted) throw new Error('the report ends inside a quoted field');
  if (field !== '' || record.length > 0) endRecord();
  return records;
}

const isSeverity = (value: string): value is Severity => (SEVERITIES as readonly string[]).includes(value);
const isConfidence = (value: string): value is Confidence => (CONFIDENCES as readonly string[]).includes(value);

/**
 * The findings in Electronegativity's CSV report. Throws on anything it cannot read (another
 * header, a row with the wrong number of fields, an unknown severity): a report read wrong must
 * fail the scan, never pass it.
 */
export function parseFindingsCsv(text: string): Finding[] {
  const [header, ...rows] = csvRecords(text);
  const names = header?.map((name) => name.trim());
  if (names === undefined || names.join(',') !== CSV_HEADER.join(',')) {
    throw new Error(`not an Electronegativity CSV report: the first line is ${JSON.stringify(header?.join(',') ?? '')}`);
  }
  return rows.map((fields, index) => {
    const line = index + 2;
    if (fields.length !== CSV_HEADER.length) throw new Error(`line ${line}: ${fields.length} fields, not ${CSV_HEADER.length}`);
    const [check = '', severity = '', confidence = '', file = '', location = '', sample = '', description = ''] = fields;
    if (!/^[A-Z0-9_]+$/.test(check)) throw new Error(`line ${line}: ${JSON.stringify(check)} is not a check id`);
    if (!isSeverity(severity)) throw new Error(`line ${line}: unknown severity ${JSON.stringify(severity)}`);
    if (!isConfidence(confidence)) throw new Error(`line ${line}: unknown confidence ${JSON.stringify(confidence)}`);
    return { check, severity, confidence, file, location, sample, description };
  });
}

/** The allow-list file's entries. Throws, naming the entry, on a malformed one or on the same check and file listed twice. */
export function parseAllowList(json: unknown): AllowEntry[] {
  const parsed = allowListSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`the allow-list is not valid: ${issue ? `[${issue.path.join('.')}] ${issue.message}` : 'unknown problem'}`);
  }
  const seen = new Set<string>();
  for (const entry of parsed.data) {
    const key = `${entry.check} ${entry.file}`;
    if (seen.has(key)) throw new Error(`the allow-list names ${entry.check} in ${entry.file} twice`);
    seen.add(key);
  }
  return parsed.data;
}

export interface Verdict {
  /** MEDIUM or HIGH findings no entry names: each fails the scan. */
  unlisted: Finding[];
  /** MEDIUM or HIGH findings an entry names, with that entry. */
  allowed: Array<{ finding: Finding; entry: AllowEntry }>;
  /** LOW and INFORMATIONAL findings: printed, never failing. */
  minor: Finding[];
  /** Entries that name no MEDIUM or HIGH finding any more: each fails the scan, so the list stays honest. */
  stale: AllowEntry[];
}

const names = (entry: AllowEntry, finding: Finding) => entry.check === finding.check && entry.file === finding.file;

/** Sorts the findings against the allow-list: an entry names every finding of its check in its file. */
export function judge(findings: readonly Finding[], allowList: readonly AllowEntry[]): Verdict {
  const verdict: Verdict = { unlisted: [], allowed: [], minor: [], stale: [] };
  const blocking = findings.filter((f) => BLOCKING_SEVERITIES.includes(f.severity));
  for (const finding of findings) {
    if (!BLOCKING_SEVERITIES.includes(finding.severity)) {
      verdict.minor.push(finding);
      continue;
    }
    const entry = allowList.find((e) => names(e, finding));
    if (entry) verdict.allowed.push({ finding, entry });
    else verdict.unlisted.push(finding);
  }
  verdict.stale = allowList.filter((entry) => !blocking.some((finding) => names(entry, finding)));
  return verdict;
}

export const passes = (verdict: Verdict): boolean => verdict.unlisted.length === 0 && verdict.stale.length === 0;

const where = (f: Finding) => (f.file === 'N/A' ? '(the whole app)' : `${f.file}:${f.location}`);
const findingLine = (f: Finding) => `${f.check} ${f.severity}/${f.confidence} ${where(f)}: ${f.description}${f.sample === 'N/A' || f.sample === '' ? '' : ` [${f.sample}]`}`;

/** What the scan prints: every finding under its heading, then the result. */
export function reportLines(verdict: Verdict, allowListName: string): string[] {
  const lines: string[] = [];
  const section = (title: string, items: string[]) => {
    if (items.length === 0) return;
    lines.push(`${title} (${items.length}):`, ...items.map((item) => `  ${item}`));
  };
  section(`MEDIUM/HIGH, not in ${allowListName}`, verdict.unlisted.map(findingLine));
  section(`${allowListName} entries that match no MEDIUM/HIGH finding any more: remove them`, verdict.stale.map((e) => `${e.check} ${e.file}`));
  const entries = [...new Set(verdict.allowed.map(({ entry }) => entry))];
  section(
    `${allowListName} entries in use`,
    entries.map((entry) =>
      [`${entry.check} in ${entry.file}: ${entry.reason}`, ...verdict.allowed.filter((a) => a.entry === entry).map(({ finding }) => `    ${findingLine(finding)}`)].join('\n'),
    ),
  );
  section('LOW/INFORMATIONAL, for review', verdict.minor.map(findingLine));
  lines.push(passes(verdict) ? 'Electronegativity: no MEDIUM or HIGH finding outside the allow-list.' : 'Electronegativity: FAILED (see above).');
  return lines;
}

/** The folders scanned, relative to the repository. */
export const SCANNED_FOLDERS = ['electron', 'renderer'] as const;
export const ALLOW_LIST_FILE = 'electronegativity-allow.json';
/** Leaves out the one check that needs the network (it fetches Electron's release list). */
const OFFLINE_EXCLUDED_CHECKS = ['AvailableSecurityFixesGlobalCheck'];

/** Runs Electronegativity over SCANNED_FOLDERS of `root` and returns its CSV report. */
export function runElectronegativity(root: string): string {
  const require = createRequire(join(root, 'package.json'));
  const packageDir = dirname(require.resolve('@doyensec/electronegativity/package.json'));
  const packageJson = z.object({ bin: z.record(z.string(), z.string()) }).parse(JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')));
  const cli = packageJson.bin.electronegativity;
  if (cli === undefined) throw new Error('@doyensec/electronegativity has no electronegativity command');
  const electronVersion = z.object({ version: z.string() }).parse(JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8'))).version;

  const stage = mkdtempSync(join(tmpdir(), 'electronegativity-'));
  try {
    const input = join(stage, 'scanned');
    for (const folder of SCANNED_FOLDERS) cpSync(join(root, folder), join(input, folder), { recursive: true });
    const output = join(stage, 'findings.csv');
    const run = spawnSync(process.execPath, [join(packageDir, cli), '-i', input, '-r', '-o', output, '-e', electronVersion, '-x', OFFLINE_EXCLUDED_CHECKS.join(',')], {
      encoding: 'utf8',
      timeout: 5 * 60_000,
      // It writes the CSV's header and its rows with two fs.writeFile calls it does not wait for
      // (the header's truncates the file); on libuv's default four threads the rows are often
      // written first and the header over them. One thread runs the two in the order they were made.
      env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
    });
    if (run.error) throw run.error;
    if (run.status !== 0) throw new Error(`electronegativity exited with ${run.status ?? run.signal}: ${run.stderr.trim() || run.stdout.trim()}`);
    return readFileSync(output, 'utf8');
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** The command line: prints the report and returns the exit code. */
export function main(root: string, print: (line: string) => void, scan: (root: string) => string = runElectronegativity): number {
  let findings: Finding[];
  let allowList: AllowEntry[];
  try {
    allowList = parseAllowList(JSON.parse(readFileSync(join(root, ALLOW_LIST_FILE), 'utf8')));
    // A report that cannot be read (its rows and header written out of order, should the
    // threadpool setting above ever stop sufficing) gets one more run, never a pass.
    const report = scan(root);
    try {
      findings = parseFindingsCsv(report);
    } catch (first) {
      print(`The report could not be read (${first instanceof Error ? first.message : String(first)}): scanning once more.`);
      findings = parseFindingsCsv(scan(root));
    }
  } catch (e) {
    print(`Electronegativity: FAILED: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  const verdict = judge(findings, allowList);
  for (const line of reportLines(verdict, ALLOW_LIST_FILE)) print(line);
  return passes(verdict) ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(resolve(import.meta.dirname, '..'), (line) => console.log(line));
}
