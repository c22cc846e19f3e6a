// scripts/check-electronegativity.ts: reading Electronegativity's CSV report (rows as version 1.10
// writes them) and judging it against the allow-list; then the command line on a stand-in scan
// and the repository's own allow-list file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ALLOW_LIST_FILE,
  csvRecords,
  judge,
  main,
  parseAllowList,
  parseFindingsCsv,
  passes,
  reportLines,
  type AllowEntry,
  type Finding,
} from '../../../scripts/check-electronegativity';

const HEADER = 'issue, severity, confidence, filename, location, sample, description, url';
const WIKI = 'https://github.com/doyensec/electronegativity/wiki';
const ROWS = {
  auxclick: `AUXCLICK_JS_CHECK,"MEDIUM","FIRM","electron/desktop/desktop-app.ts","196:20","const created = new BrowserWindow({","Limit navigation flows to untrusted origins. Middle-click may cause Electron to open a link within a new window",${WIKI}/AUXCLICK_JS_CHECK`,
  preload: `PRELOAD_JS_CHECK,"MEDIUM","FIRM","electron/desktop/desktop-app.ts","208:8","preload: location.preloadPath,","Review the use of preload scripts",${WIKI}/PRELOAD_JS_CHECK`,
  protocolA: `PROTOCOL_HANDLER_JS_CHECK,"MEDIUM","TENTATIVE","electron/desktop/dial-links.ts","31:50","app.setAsDefaultProtocolClient(scheme, launch.execPath, [resolve(script)])","Review the use of custom protocol handlers",${WIKI}/PROTOCOL_HANDLER_JS_CHECK`,
  protocolB: `PROTOCOL_HANDLER_JS_CHECK,"MEDIUM","TENTATIVE","electron/desktop/dial-links.ts","31:127","app.setAsDefaultProtocolClient(scheme)","Review the use of custom protocol handlers",${WIKI}/PROTOCOL_HANDLER_JS_CHECK`,
  weakCsp: `CSP_GLOBAL_CHECK,"LOW","FIRM","renderer/index.html","6:0","default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'","One or more CSP directives detected seems to be vulnerable",${WIKI}/CSP_GLOBAL_CHECK`,
  noCsp: `CSP_GLOBAL_CHECK,"MEDIUM","CERTAIN","N/A","0:0",N/A,"No CSP has been detected in the target application",${WIKI}/CSP_GLOBAL_CHECK`,
  noNavigationLimit: `LIMIT_NAVIGATION_GLOBAL_CHECK,"HIGH","CERTAIN","N/A","0:0",N/A,"Missing navigation limits using .on new-window and will-navigate events",${WIKI}/LIMIT_NAVIGATION_GLOBAL_CHECK`,
  quoted: `DANGEROUS_FUNCTIONS_JS_CHECK,"LOW","TENTATIVE","renderer/a, b.ts","3:1","x.innerHTML = ""<b>"" + y, z","Do not use ""insertCSS"", ""executeJavaScript"" or ""eval"" with user-supplied content",${WIKI}/DANGEROUS_FUNCTIONS_JS_CHECK`,
};
/** A report as Electronegativity writes it: the header, the rows, each line ended. */
const csv = (...rows: string[]) => [HEADER, ...rows].map((line) => `${line}\n`).join('');

const PRELOAD_ENTRY: AllowEntry = { check: 'PRELOAD_JS_CHECK', file: 'electron/desktop/desktop-app.ts', reason: 'The preload exposes SoftphoneApi only (preload.test.ts).' };
const PROTOCOL_ENTRY: AllowEntry = { check: 'PROTOCOL_HANDLER_JS_CHECK', file: 'electron/desktop/dial-links.ts', reason: 'tel: links only become a checked phone number.' };

describe('reading the CSV report', () => {
  it('reads each row into a finding, quoted fields with commas and doubled quotes included', () => {
    const findings = parseFindingsCsv(csv(ROWS.preload, ROWS.noCsp, ROWS.quoted));
    expect(findings).toEqual([
      {
        check: 'PRELOAD_JS_CHECK',
        severity: 'MEDIUM',
        confidence: 'FIRM',
        file: 'electron/desktop/desktop-app.ts',
        location: '208:8',
        sample: 'preload: location.preloadPath,',
        description: 'Review the use of preload scripts',
      },
      { check: 'CSP_GLOBAL_CHECK', severity: 'MEDIUM', confidence: 'CERTAIN', file: 'N/A', location: '0:0', sample: 'N/A', description: 'No CSP has been detected in the target application' },
      {
        check: 'DANGEROUS_FUNCTIONS_JS_CHECK',
        severity: 'LOW',
        confidence: 'TENTATIVE',
        file: 'renderer/a, b.ts',
        location: '3:1',
        sample: 'x.innerHTML = "<b>" + y, z',
        description: 'Do not use "insertCSS", "executeJavaScript" or "eval" with user-supplied content',
      },
    ]);
  });

  it('reads a report without findings, and one with Windows line ends', () => {
    expect(parseFindingsCsv(`${HEADER}\n`)).toEqual([]);
    expect(parseFindingsCsv([HEADER, ROWS.auxclick, ''].join('\r\n')).map((f) => f.check)).toEqual(['AUXCLICK_JS_CHECK']);
  });

  it('keeps a line break inside a quoted field', () => {
    expect(csvRecords('a,"b\nc",d\ne\n')).toEqual([['a', 'b\nc', 'd'], ['e']]);
  });

  it('refuses what it cannot read, naming the line: a report read wrong must not pass', () => {
    expect(() => parseFindingsCsv('')).toThrow(/not an Electronegativity CSV report/);
    // The rows written over the header (the tool's two writes are not ordered).
    expect(() => parseFindingsCsv(`${ROWS.preload}\n${ROWS.auxclick}\n`)).toThrow(/not an Electronegativity CSV report/);
    expect(() => parseFindingsCsv(csv(ROWS.preload, 'AUXCLICK_JS_CHECK,"MEDIUM","FIRM"'))).toThrow(/line 3: 3 fields, not 8/);
    expect(() => parseFindingsCsv(csv(ROWS.preload.replace('"MEDIUM"', '"SEVERE"')))).toThrow(/line 2: unknown severity "SEVERE"/);
    expect(() => parseFindingsCsv(csv(ROWS.preload.replace('"FIRM"', '"SURE"')))).toThrow(/line 2: unknown confidence "SURE"/);
    expect(() => parseFindingsCsv(csv(ROWS.preload, ''))).toThrow(/line 3: 1 fields/);
    expect(() => parseFindingsCsv(csv(`preload check${ROWS.preload.slice('PRELOAD_JS_CHECK'.length)}`))).toThrow(/is not a check id/);
    expect(() => parseFindingsCsv(`${HEADER}\nPRELOAD_JS_CHECK,"MEDIUM,FIRM\n`)).toThrow(/ends inside a quoted field/);
  });
});

describe('the allow-list file', () => {
  it('takes entries of check id, file and reason', () => {
    expect(parseAllowList([PRELOAD_ENTRY, PROTOCOL_ENTRY])).toEqual([PRELOAD_ENTRY, PROTOCOL_ENTRY]);
    expect(parseAllowList([])).toEqual([]);
  });

  it('refuses an entry without a real reason, with another field, or listed twice', () => {
    expect(() => parseAllowList([{ ...PRELOAD_ENTRY, reason: 'ok' }])).toThrow(/\[0\.reason\] say why/);
    expect(() => parseAllowList([{ check: 'PRELOAD_JS_CHECK', file: 'electron/desktop/desktop-app.ts' }])).toThrow(/\[0\.reason\]/);
    expect(() => parseAllowList([PROTOCOL_ENTRY, { ...PRELOAD_ENTRY, severity: 'MEDIUM' }])).toThrow(/\[1\]/);
    expect(() => parseAllowList([{ ...PRELOAD_ENTRY, check: 'preload' }])).toThrow(/\[0\.check\]/);
    expect(() => parseAllowList([PRELOAD_ENTRY, { ...PRELOAD_ENTRY, reason: 'Listed a second time, with another reason.' }])).toThrow(/names PRELOAD_JS_CHECK in electron\/desktop\/desktop-app.ts twice/);
    expect(() => parseAllowList({ entries: [] })).toThrow(/not valid/);
  });

  it("the repository's own list is valid, and every entry points at a file that exists", () => {
    const root = join(import.meta.dirname, '../../..');
    const entries = parseAllowList(JSON.parse(readFileSync(join(root, ALLOW_LIST_FILE), 'utf8')));
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) expect(() => readFileSync(join(root, entry.file)), entry.file).not.toThrow();
  });
});

describe('judging the findings', () => {
  const findings = (...rows: string[]): Finding[] => parseFindingsCsv(csv(...rows));

  it('fails on a MEDIUM or HIGH finding the list does not name; an entry names every finding of its check in its file', () => {
    const verdict = judge(findings(ROWS.auxclick, ROWS.preload, ROWS.protocolA, ROWS.protocolB, ROWS.noNavigationLimit), [PRELOAD_ENTRY, PROTOCOL_ENTRY]);
    expect(verdict.unlisted.map((f) => f.check)).toEqual(['AUXCLICK_JS_CHECK', 'LIMIT_NAVIGATION_GLOBAL_CHECK']);
    expect(verdict.allowed.map(({ finding, entry }) => [finding.location, entry.check])).toEqual([
      ['208:8', 'PRELOAD_JS_CHECK'],
      ['31:50', 'PROTOCOL_HANDLER_JS_CHECK'],
      ['31:127', 'PROTOCOL_HANDLER_JS_CHECK'],
    ]);
    expect(verdict.stale).toEqual([]);
    expect(passes(verdict)).toBe(false);
  });

  it('an entry names its file only: the same check elsewhere still fails', () => {
    const elsewhere = ROWS.preload.replace('electron/desktop/desktop-app.ts', 'electron/desktop/second-window.ts');
    const verdict = judge(findings(ROWS.preload, elsewhere), [PRELOAD_ENTRY]);
    expect(verdict.unlisted.map((f) => f.file)).toEqual(['electron/desktop/second-window.ts']);
    expect(passes(verdict)).toBe(false);
  });

  it('passes with LOW and INFORMATIONAL findings unlisted: they are printed for review', () => {
    const verdict = judge(findings(ROWS.preload, ROWS.weakCsp, ROWS.quoted), [PRELOAD_ENTRY]);
    expect(verdict.unlisted).toEqual([]);
    expect(verdict.minor.map((f) => f.check)).toEqual(['CSP_GLOBAL_CHECK', 'DANGEROUS_FUNCTIONS_JS_CHECK']);
    expect(passes(verdict)).toBe(true);
  });

  it('fails on an entry that names no MEDIUM or HIGH finding any more, also when only a LOW one of its check is left', () => {
    const cspEntry: AllowEntry = { check: 'CSP_GLOBAL_CHECK', file: 'renderer/index.html', reason: 'A policy the checker once found weak.' };
    const verdict = judge(findings(ROWS.preload, ROWS.weakCsp), [PRELOAD_ENTRY, PROTOCOL_ENTRY, cspEntry]);
    expect(verdict.unlisted).toEqual([]);
    expect(verdict.stale).toEqual([PROTOCOL_ENTRY, cspEntry]);
    expect(passes(verdict)).toBe(false);
  });

  it('prints every finding under its heading, the reason once per entry, and the result', () => {
    const lines = reportLines(judge(findings(ROWS.auxclick, ROWS.protocolA, ROWS.protocolB, ROWS.weakCsp), [PROTOCOL_ENTRY, PRELOAD_ENTRY]), 'allow.json').join('\n');
    expect(lines).toContain('MEDIUM/HIGH, not in allow.json (1):\n  AUXCLICK_JS_CHECK MEDIUM/FIRM electron/desktop/desktop-app.ts:196:20: Limit navigation flows');
    expect(lines).toContain('entries that match no MEDIUM/HIGH finding any more: remove them (1):\n  PRELOAD_JS_CHECK electron/desktop/desktop-app.ts');
    expect(lines.split(PROTOCOL_ENTRY.reason)).toHaveLength(2);
    expect(lines).toContain('dial-links.ts:31:50');
    expect(lines).toContain('dial-links.ts:31:127');
    expect(lines).toContain('LOW/INFORMATIONAL, for review (1):\n  CSP_GLOBAL_CHECK LOW/FIRM renderer/index.html:6:0');
    expect(lines.endsWith('Electronegativity: FAILED (see above).')).toBe(true);
    const clean = reportLines(judge(findings(ROWS.preload), [PRELOAD_ENTRY]), 'allow.json');
    expect(clean.at(-1)).toBe('Electronegativity: no MEDIUM or HIGH finding outside the allow-list.');
  });
});

describe('the command line', () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
    root = undefined;
  });
  const withAllowList = (entries: unknown): string => {
    root = mkdtempSync(join(tmpdir(), 'electronegativity-check-'));
    writeFileSync(join(root, ALLOW_LIST_FILE), JSON.stringify(entries));
    return root;
  };
  const run = (dir: string, ...reports: string[]) => {
    const printed: string[] = [];
    let scans = 0;
    const code = main(dir, (line) => printed.push(line), () => {
      const report = reports[scans] ?? reports.at(-1) ?? '';
      scans += 1;
      return report;
    });
    return { code, printed: printed.join('\n'), scans };
  };

  it('exits 0 when everything MEDIUM or HIGH is listed, 1 when not', () => {
    const dir = withAllowList([PRELOAD_ENTRY, PROTOCOL_ENTRY]);
    expect(run(dir, csv(ROWS.preload, ROWS.protocolA, ROWS.weakCsp)).code).toBe(0);
    const failed = run(dir, csv(ROWS.preload, ROWS.protocolA, ROWS.auxclick));
    expect(failed.code).toBe(1);
    expect(failed.printed).toContain('AUXCLICK_JS_CHECK');
  });

  it('scans once more when the report cannot be read, and fails if it still cannot', () => {
    const dir = withAllowList([PRELOAD_ENTRY]);
    const garbled = `${ROWS.preload}\n`;
    const retried = run(dir, garbled, csv(ROWS.preload));
    expect(retried).toMatchObject({ code: 0, scans: 2 });
    expect(retried.printed).toContain('could not be read');
    const broken = run(dir, garbled, garbled);
    expect(broken).toMatchObject({ code: 1, scans: 2 });
    expect(broken.printed).toContain('Electronegativity: FAILED: not an Electronegativity CSV report');
  });

  it('fails on a missing or invalid allow-list before scanning', () => {
    root = mkdtempSync(join(tmpdir(), 'electronegativity-check-'));
    const missing = run(root, csv());
    expect(missing).toMatchObject({ code: 1, scans: 0 });
    expect(missing.printed).toContain(ALLOW_LIST_FILE);
    writeFileSync(join(root, ALLOW_LIST_FILE), JSON.stringify([{ check: 'PRELOAD_JS_CHECK' }]));
    expect(run(root, csv()).code).toBe(1);
  });
});
