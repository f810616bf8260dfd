import { Writable } from 'node:stream';
import type { CliIo } from '../../src/cli/io.js';

/** A CliIo whose stdout and stderr are captured as text, for calling `main` in-process. */
export interface CapturedIo extends CliIo {
  readonly out: () => string;
  readonly err: () => string;
}

export function captureIo(cwd: string = process.cwd(), env: Readonly<Record<string, string | undefined>> = {}): CapturedIo {
  let out = '';
  let err = '';
  const sink = (append: (s: string) => void): Writable =>
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        append(chunk.toString());
        cb();
      },
    });
  return { stdout: sink((s) => (out += s)), stderr: sink((s) => (err += s)), env, cwd, out: () => out, err: () => err };
}
