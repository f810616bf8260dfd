/**
 * Child process of serve.test.ts: runs SERVE_CASES in-process, each with a time limit, and prints the
 * verdicts as one JSON line after a marker. It exits when done, so a server a case wrongly started
 * dies with it. Not a test file itself (no .test.ts).
 */
import { createServer, type AddressInfo } from 'node:net';
import { judgeCli, runCliCase, type CliRun } from './cli-harness.js';
import { generatedInputs } from './generate.js';
import { makeSandbox, verdict, type Verdict } from './harness.js';
import { SERVE_CASES } from './serve-cases.js';

export const MARKER = '@@BAD-INPUT-VERDICTS@@';
const LIMIT_MS = 20_000;

const sb = makeSandbox('serve');
generatedInputs(sb.dir);
const holder = createServer();
await new Promise<void>((done) => holder.listen(0, '127.0.0.1', done));
const port = String((holder.address() as AddressInfo).port);

const verdicts: Verdict[] = [];
for (const c of SERVE_CASES) {
  const argv = c.argv.map((a) => a.replaceAll('$PORT_IN_USE', port));
  const names = new RegExp(c.names.source.replaceAll('\\$PORT_IN_USE', port), c.names.flags);
  const timeout = new Promise<'timeout'>((done) => setTimeout(() => done('timeout'), LIMIT_MS).unref());
  const res: CliRun | 'timeout' = await Promise.race([runCliCase({ ...c, argv, names }, sb), timeout]);
  if (res === 'timeout') {
    verdicts.push(verdict(c.id, [{ category: 'crash', what: `still running after ${LIMIT_MS / 1000} s: it started serving instead of refusing the input` }], 'no exit: listening'));
  } else {
    verdicts.push(judgeCli({ ...c, argv, names }, res));
  }
}
holder.close();
process.stdout.write(`\n${MARKER}${JSON.stringify(verdicts)}\n`);
sb.cleanup();
process.exit(0);
