import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { PowerMeter, PowerReading, PowerSpec } from './types.js';
import { SeriesBuilder, spawnFailure, tail } from './types.js';

/**
 * Power from `nvidia-smi --query-gpu=index,power.draw --format=csv,noheader,nounits -lms N` on the
 * machine that runs the server: one line per GPU every N ms, `0, 245.67` (watts), until killed; a GPU
 * without a power sensor prints `[N/A]` (or `[Not Supported]`) and is left out. Each line is stamped on
 * the run's clock as it arrives. Spawned with an argv array, never a shell.
 */
type SmiSpec = Extract<PowerSpec, { kind: 'nvidia-smi' }>;

export function nvidiaSmiArgv(spec: SmiSpec): string[] {
  return ['--query-gpu=index,power.draw', '--format=csv,noheader,nounits', '-lms', String(spec.interval_ms), ...(spec.gpus === undefined ? [] : ['-i', spec.gpus.join(',')])];
}

const LINE = /^\s*(\d+)\s*,\s*(.*?)\s*$/;
const NA = /^\[?(N\/A|Not Supported|Unknown Error|GPU is lost)\]?$/i;

/** One output line → GPU index and watts, `na` for a GPU without a reading, or null for anything else. */
export function parseSmiLine(line: string): { gpu: string; watts: number } | 'na' | null {
  const m = LINE.exec(line);
  if (m === null) return null;
  const v = (m[2] as string).replace(/\s*W$/, '');
  if (NA.test(v)) return 'na';
  const watts = Number(v);
  return v !== '' && Number.isFinite(watts) && watts >= 0 ? { gpu: m[1] as string, watts } : null;
}

export interface SmiDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** How long start() waits for the first reading (a cold driver can take a second or two). */
  readonly firstReadingTimeoutMs?: number;
}

export function createNvidiaSmiMeter(spec: SmiSpec, deps: SmiDeps): PowerMeter {
  const series = new SeriesBuilder();
  let clock: () => number = () => 0;
  let child: ChildProcess | null = null;
  let failure: string | null = null;
  let exitCode: number | null = null;
  let exited: Promise<void> = Promise.resolve();
  let naGpus = new Set<string>();
  let lines = 0;
  // What it printed that is no reading (a driver error): its first lines on stdout, the last of stderr.
  const odd: string[] = [];
  let errText = '';
  const other = (): string => [...odd, errText].join('\n');
  let onLine: (() => void) | null = null;
  let stopped: Promise<PowerReading> | null = null;

  const waitFor = (cond: () => boolean, ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (cond()) return resolve();
      const done = (): void => {
        clearTimeout(t);
        onLine = null;
        resolve();
      };
      const t = setTimeout(done, ms);
      onLine = () => {
        if (cond()) done();
      };
    });

  return {
    source: 'nvidia-smi',
    async start(c) {
      clock = c;
      try {
        child = spawn(spec.executable, nvidiaSmiArgv(spec), { env: deps.env, stdio: ['ignore', 'pipe', 'pipe'], shell: false });
      } catch (err) {
        failure = spawnFailure(spec.executable, err);
        return;
      }
      const p = child;
      exited = new Promise((resolve) => {
        p.once('error', (err) => {
          failure ??= spawnFailure(spec.executable, err);
          resolve();
          onLine?.();
        });
        p.once('close', (code, signal) => {
          exitCode = code ?? (signal === null ? 1 : 128);
          resolve();
          onLine?.();
        });
      });
      p.stderr?.on('data', (d: Buffer) => (errText = (errText + d.toString()).slice(-2000)));
      createInterface({ input: p.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        lines++;
        const r = parseSmiLine(line);
        if (r === 'na') naGpus.add(line.split(',')[0]?.trim() ?? '?');
        else if (r === null) {
          if (odd.length < 3 && !odd.includes(line)) odd.push(line);
        } else series.add(r.gpu, clock(), r.watts);
        onLine?.();
      });
      // Any first line will do: a reading, or what says there will be none.
      await waitFor(() => lines > 0 || failure !== null || exitCode !== null, deps.firstReadingTimeoutMs ?? 5000);
    },
    stop() {
      stopped ??= (async (): Promise<PowerReading> => {
        const stopAtS = clock();
        const alive = child !== null && failure === null && exitCode === null;
        const diedEarly = !alive && failure === null && child !== null ? exitCode : null;
        // One more round of lines past the stop instant, so the readings cover the window's end.
        if (alive && series.size > 0) await waitFor(() => exitCode !== null || series.countSince(stopAtS) >= series.size, spec.interval_ms * 3 + 1000);
        if (child !== null && exitCode === null && failure === null) {
          child.kill('SIGTERM');
          const kill = setTimeout(() => child?.kill('SIGKILL'), 1000);
          await exited;
          clearTimeout(kill);
        }
        naGpus = new Set([...naGpus].filter((g) => !series.build('power_w').some((s) => s.gpu === g)));
        if (failure !== null) return { ok: false, source: 'nvidia-smi', reason: failure };
        if (diedEarly !== null) return { ok: false, source: 'nvidia-smi', reason: `${spec.executable} exited ${diedEarly} before the run ended${other().trim() === '' ? '' : `: ${tail(other())}`}` };
        if (naGpus.size > 0) return { ok: false, source: 'nvidia-smi', reason: `${spec.executable} reports power.draw as [N/A] for GPU ${[...naGpus].join(', ')} (no power sensor readable)` };
        if (series.size === 0) return { ok: false, source: 'nvidia-smi', reason: `${spec.executable} printed no power reading${other().trim() === '' ? '' : `: ${tail(other())}`}` };
        return { ok: true, source: 'nvidia-smi', series: series.build('power_w') };
      })();
      return stopped;
    },
  };
}
