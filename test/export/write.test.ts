import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isLmBenchError } from '../../src/errors.js';
import type { ExportDocuments } from '../../src/export/documents.js';
import { writeExport } from '../../src/export/write.js';

// The file-system edge: staged, then renamed; a failure leaves the folder as it was.

const docs: ExportDocuments = {
  documents: [
    { subject: { kind: 'run', run_id: 1, source_format: 'vllm_bench_serve', source_path: null, content_hash: 'a' }, file: { name: 'run-1.json', text: '{"completed": 1}\n' }, sidecar: { name: 'run-1.json.config.yaml', text: 'gpu: H100-SXM\n' } },
    { subject: { kind: 'run', run_id: 2, source_format: 'vllm_bench_serve', source_path: null, content_hash: 'b' }, file: { name: 'run-2.json', text: '{"completed": 2}\n' }, sidecar: null },
  ],
  summary: { name: 'summary.json', text: '[]\n' },
};

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'lmb-export-write-'));
}

describe('writeExport', () => {
  it('writes every file whole into a folder it creates, and leaves no staging folder', () => {
    const dir = tempDir();
    try {
      const out = join(dir, 'a', 'b');
      const w = writeExport(out, docs);
      assert.deepEqual(readdirSync(out).sort(), ['run-1.json', 'run-1.json.config.yaml', 'run-2.json', 'summary.json']);
      assert.equal(readFileSync(join(out, 'run-2.json'), 'utf8'), '{"completed": 2}\n');
      assert.equal(w.documents[0]?.sidecarPath, join(out, 'run-1.json.config.yaml'));
      assert.equal(w.documents[1]?.sidecarPath, null);
      assert.equal(w.summaryPath, join(out, 'summary.json'));
      // A second export of the same runs replaces the files.
      writeExport(out, { ...docs, summary: { name: 'summary.json', text: '[1]\n' } });
      assert.equal(readFileSync(join(out, 'summary.json'), 'utf8'), '[1]\n');
      assert.equal(readdirSync(out).length, 4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a name taken by a folder: refused before anything lands, the folder as it was', () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir, 'summary.json'));
      writeFileSync(join(dir, 'keep.txt'), 'x');
      assert.throws(() => writeExport(dir, docs), (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && /summary\.json: a folder is in the way/.test(err.message));
      assert.deepEqual(readdirSync(dir).sort(), ['keep.txt', 'summary.json'], 'no run file, no staging folder');
      assert.deepEqual(readdirSync(join(dir, 'summary.json')), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an output path that is a file is refused as one, the file untouched', () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir, 'report.json'), 'x');
      assert.throws(() => writeExport(join(dir, 'report.json'), docs), (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && /^--out .*report\.json is a file; --out names a folder/.test(err.message));
      assert.deepEqual(readdirSync(dir), ['report.json']);
      assert.equal(readFileSync(join(dir, 'report.json'), 'utf8'), 'x');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an output path under a file is refused with LMB_ERR_INVALID_ARGUMENT naming --out', () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir, 'file'), 'x');
      assert.throws(() => writeExport(join(dir, 'file', 'out'), docs), (err: unknown) => isLmBenchError(err, 'LMB_ERR_INVALID_ARGUMENT') && /^--out .*file\/out: cannot write there/.test(err.message));
      assert.deepEqual(readdirSync(dir), ['file']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
