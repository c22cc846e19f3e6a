// The unit project's global setup: one folder per run where relay-data-dir.ts makes, the first
// time a test asks, the embedded records every relay a test starts copies; removed after the run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

export default function setup(project: TestProject): () => void {
  const root = mkdtempSync(join(tmpdir(), 'relay-data-template-'));
  project.provide('relayDataTemplateRoot', root);
  return () => rmSync(root, { recursive: true, force: true });
}
