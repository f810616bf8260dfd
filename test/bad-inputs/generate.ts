/** Inputs made at test time rather than committed: binary garbage and large junk files. */
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import { garbage } from '../ingest/helpers.js';

export { garbage };

/** Writes `bytes` bytes to `file` in 1 MiB chunks of `chunk` (repeated), prefixed by `head`. */
export function writeLarge(file: string, bytes: number, chunk: Uint8Array, head = ''): void {
  const fd = openSync(file, 'w');
  try {
    let left = bytes;
    if (head !== '') {
      const h = Buffer.from(head);
      writeSync(fd, h);
      left -= h.length;
    }
    while (left > 0) {
      const n = Math.min(left, chunk.length);
      writeSync(fd, chunk, 0, n);
      left -= n;
    }
  } finally {
    closeSync(fd);
  }
}

/** The generated inputs the CLI tables refer to: `$T/garbage.bin`, `$T/not-a-db.db`, `$T/a-directory`, `$T/a-file.txt`. */
export function generatedInputs(dir: string): void {
  writeFileSync(join(dir, 'garbage.bin'), garbage(64 * 1024));
  writeFileSync(join(dir, 'not-a-db.db'), 'this is a text file, not a SQLite database\n'.repeat(200));
  mkdirSync(join(dir, 'a-directory'), { recursive: true });
  writeFileSync(join(dir, 'a-file.txt'), 'a plain file where a directory is expected\n');
}
