/**
 * Optuna's TPE sampler as a benchmark peer, driven over JSON lines by bench/peers/optuna_tpe.py.
 * Benchmarks only: lm-bench never depends on Optuna, so a machine without it just skips this peer
 * (see optunaAvailable).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface OptunaKnob {
  readonly name: string;
  readonly choices: readonly (string | number | boolean | null)[];
}

export type OptunaConfig = Record<string, string | number | boolean | null>;

const SCRIPT = fileURLToPath(new URL('../peers/optuna_tpe.py', import.meta.url));
const SCRIPT_NAME = 'bench/peers/optuna_tpe.py';
/** Enough of the child's stderr to show a Python traceback's last frames and message. */
const STDERR_TAIL = 4000;

/**
 * Interpreters to try, in order. The first `python3` on PATH may be a pyenv or venv one that cannot
 * see Debian's python3-optuna, so the system interpreter is a fallback; LM_BENCH_PYTHON overrides.
 */
function pythonCandidates(): string[] {
  const fromEnv = process.env['LM_BENCH_PYTHON'];
  const all = [...(fromEnv ? [fromEnv] : []), 'python3', '/usr/bin/python3'];
  return [...new Set(all)];
}

let resolvedPython: string | null | undefined;

/** The first candidate interpreter that can import optuna, or null; probed once per process. */
function findPython(): string | null {
  if (resolvedPython !== undefined) return resolvedPython;
  resolvedPython = null;
  for (const candidate of pythonCandidates()) {
    const probe = spawnSync(candidate, ['-c', 'import optuna'], { stdio: 'ignore', timeout: 60_000 });
    if (probe.status === 0) {
      resolvedPython = candidate;
      break;
    }
  }
  return resolvedPython;
}

/** Whether some python3 here can import optuna, so a benchmark can skip the peer instead of failing. */
export function optunaAvailable(): boolean {
  return findPython() !== null;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/**
 * Runs `budget` trials of Optuna's TPE (seeded, default settings unless `startup` overrides
 * n_startup_trials) over the categorical knobs, maximizing what `evaluate` returns. `evaluate`
 * returning null means the configuration failed to start: Optuna is told the trial failed and it
 * scores 0 here. Resolves with each trial's value in order.
 */
export async function optunaTpe(opts: {
  knobs: readonly OptunaKnob[];
  seed: number;
  budget: number;
  startup?: number;
  evaluate: (config: OptunaConfig) => Promise<number | null>;
}): Promise<number[]> {
  const { knobs, seed, budget, startup, evaluate } = opts;
  if (!Number.isInteger(seed)) throw new Error(`${SCRIPT_NAME}: seed must be an integer, got ${seed}`);
  if (!Number.isInteger(budget) || budget < 0) throw new Error(`${SCRIPT_NAME}: budget must be a non-negative integer, got ${budget}`);
  if (startup !== undefined && (!Number.isInteger(startup) || startup < 0)) {
    throw new Error(`${SCRIPT_NAME}: startup must be a non-negative integer, got ${startup}`);
  }
  const python = findPython();
  if (python === null) {
    throw new Error(
      `${SCRIPT_NAME}: no Python with optuna found (tried ${pythonCandidates().join(', ')}); ` +
        'install it with `apt-get install -y python3-optuna` or point LM_BENCH_PYTHON at an interpreter that has it',
    );
  }

  const args = [SCRIPT, '--seed', String(seed), '--budget', String(budget)];
  if (startup !== undefined) args.push('--startup', String(startup));
  // A fixed hash seed keeps anything in Optuna that iterates a set or dict of strings in one order,
  // so the same seed gives the same trials in every run.
  const child = spawn(python, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PYTHONHASHSEED: '0' } });

  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  // Awaited only after the protocol loop; this keeps a spawn error from being an unhandled rejection meanwhile.
  exited.catch(() => undefined);
  // Writing to a child that has died raises EPIPE on stdin; its exit status reports the real cause.
  child.stdin.on('error', () => undefined);

  const failure = (what: string): Error => {
    const tail = stderr.trim();
    return new Error(`${SCRIPT_NAME} (${python}): ${what}${tail ? `\n--- stderr tail ---\n${tail}` : ''}`);
  };
  const send = (message: unknown): void => {
    child.stdin.write(`${JSON.stringify(message)}\n`);
  };

  const values: number[] = [];
  let done = false;
  try {
    send({ knobs, direction: 'maximize' });
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    for await (const line of lines) {
      if (line.trim() === '') continue;
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        throw failure(`not a JSON line: ${line.slice(0, 200)}`);
      }
      if (done) throw failure(`output after done: ${line.slice(0, 200)}`);
      if (!isRecord(message)) throw failure(`unexpected line: ${line.slice(0, 200)}`);
      if (message['done'] === true) {
        done = true;
        child.stdin.end();
        continue;
      }
      const config = message['config'];
      if (message['trial'] !== values.length || !isRecord(config)) {
        throw failure(`expected trial ${values.length}, got: ${line.slice(0, 200)}`);
      }
      const value = await evaluate(config as OptunaConfig);
      if (value === null) {
        send({ failed: true });
        values.push(0);
      } else if (Number.isFinite(value)) {
        send({ value });
        values.push(value);
      } else {
        // JSON has no NaN or Infinity, and a silent 0 would hide a broken objective.
        throw new Error(`${SCRIPT_NAME}: evaluate returned ${value} for trial ${values.length}; return a finite number or null`);
      }
    }
  } catch (e) {
    child.kill();
    await exited.catch(() => undefined);
    throw e;
  }

  let status: { code: number | null; signal: NodeJS.Signals | null };
  try {
    status = await exited;
  } catch (e) {
    throw failure(`could not run ${python}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (status.code !== 0) throw failure(`exited with ${status.code !== null ? `code ${status.code}` : `signal ${String(status.signal)}`}`);
  if (!done || values.length !== budget) throw failure(`stopped after ${values.length} of ${budget} trials without reporting done`);
  return values;
}
