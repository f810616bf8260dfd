import { isAbsolute, join } from 'node:path';
import { PROJECT_ROOT } from '../../catalog/index.js';
import { Workload } from '../../domain/index.js';
import { loadYamlFile } from '../../util/yaml.js';
import { LmBenchError } from '../../errors.js';
import { loadSpace, type PruneReport } from '../../space/index.js';
import { numberFlag, parseFlags, requireFlag } from '../args.js';
import { writeJson, type CliIo, type Command } from '../io.js';
import { OFFLINE_FLAG, resolveGpuFlag, resolveModelFlag } from '../model-flag.js';
import { usage as USAGE } from '../usage/space.js';



const at = (cwd: string, p: string): string => (isAbsolute(p) ? p : join(cwd, p));

export const command: Command = {
  name: 'space',
  summary: 'search space: knobs, rules and what pruning removes',
  usage: USAGE,
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const { values } = parseFlags(argv, {
      space: { type: 'string', multiple: true },
      gpu: { type: 'string' },
      gpus: { type: 'string' },
      model: { type: 'string' },
      workload: { type: 'string' },
      json: { type: 'boolean' },
      ...OFFLINE_FLAG,
    });
    const files = (values.space ?? [join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml')]).map((f) => at(io.cwd, f));
    const hardware = resolveGpuFlag(requireFlag(values.gpu, 'gpu'), io);
    const gpuCount = numberFlag(requireFlag(values.gpus, 'gpus'), 'gpus', { int: true, min: 1, max: 1024 }) ?? 1;
    const model = (await resolveModelFlag(requireFlag(values.model, 'model'), io, values.offline)).spec;
    const workload = loadYamlFile(at(io.cwd, requireFlag(values.workload, 'workload')), Workload, 'LMB_ERR_WORKLOAD_INVALID');
    const space = loadSpace(files);
    if (io.stderr.isTTY === true && values.json !== true) io.stderr.write('pruning…\r');
    const report = space.prune({ hardware, gpuCount, model, workload });
    if (io.stderr.isTTY === true && values.json !== true) io.stderr.write('         \r');
    if (values.json === true) writeJson(io, { ...report, knobs: space.knobs.map((k) => ({ name: k.name, flag: k.flag, type: k.type, when: k.when ?? null })) });
    else io.stdout.write(formatReport(report, space.knobs.length));
    if (report.points_after === 0) throw nothingLeft(report);
    return 0;
  },
};

const num = (n: number): string => n.toLocaleString('en-US');
/** Sources are long (file, reference section, notes); the table shows their head, --json all of it. */
const short = (s: string, width = 72): string => (s.length <= width ? s : `${s.slice(0, width - 1)}…`);

export function formatReport(r: PruneReport, knobCount: number): string {
  const pct = (n: number): string => (r.points_before === 0 ? '0.0' : ((100 * n) / r.points_before).toFixed(1));
  const idW = Math.max(4, ...r.rules.map((x) => x.id.length));
  const nW = Math.max(7, num(r.points_before).length);
  const lines = [
    `space ${r.space} (${knobCount} knobs) for ${r.context.model} on ${r.context.gpus}× ${r.context.gpu}, workload ${r.context.workload} (longest request ${num(r.context.max_request_tokens)} tokens)`,
    '',
    `${'rule'.padEnd(idW)}  ${'kind'.padEnd(8)}  ${'removed'.padStart(nW)}  ${'%'.padStart(5)}  source`,
    ...r.rules.map((x) => `${x.id.padEnd(idW)}  ${x.kind.padEnd(8)}  ${num(x.removed).padStart(nW)}  ${pct(x.removed).padStart(5)}  ${short(x.source)}`),
    '',
    `${'before'.padEnd(idW + 10)}  ${num(r.points_before).padStart(nW)}`,
    `${'after'.padEnd(idW + 10)}  ${num(r.points_after).padStart(nW)}  ${pct(r.points_after).padStart(5)}`,
    '',
    `Each removed configuration counts for the first rule it breaks, in rule order (${num(r.evaluations)} rule evaluations).`,
    ...estimateNote(r),
  ];
  return `${lines.join('\n')}\n`;
}

/** Why the counts are an estimate: the rule whose knobs multiply past what counting point by point can walk. */
function estimateNote(r: PruneReport): string[] {
  if (r.method === 'exact') return [];
  const c = r.costliest;
  const knobs = c === null ? '' : c.knobs.slice(0, 4).map((k) => `${k.name} ${num(k.points)}`).join(' × ');
  return [
    `Removals are ESTIMATED from ${num(r.samples ?? 0)} configurations drawn uniformly from the grid (before is exact)${
      c === null ? '' : `: counting exactly would walk rule ${c.rule}'s ${c.combinations.toExponential(1)} combinations of its knobs (${knobs}${c.knobs.length > 4 ? ' × …' : ''} grid points); a coarser grid or step on those knobs makes it exact`
    }.`,
  ];
}

/**
 * An empty space is an error (any tune of it would fail), after the report that shows why: the rules
 * that removed points, in file order, and what the last of them says.
 */
function nothingLeft(r: PruneReport): LmBenchError {
  const removers = r.rules.filter((x) => x.removed > 0);
  const last = removers.at(-1);
  const approx = r.method === 'estimate' ? '≈' : '';
  const list = removers.map((x) => `${x.id} removed ${approx}${num(x.removed)}`).join(', ');
  const where = `${r.context.model} on ${r.context.gpus}× ${r.context.gpu}, workload ${r.context.workload}`;
  return new LmBenchError(
    'LMB_ERR_SPACE_EMPTY',
    `nothing is left of the ${num(r.points_before)} configurations of ${r.space} for ${where}: ${list || 'no rule removed any (the grid is empty)'}${last === undefined ? '' : `; the last rule, ${last.id}, says: ${last.message}`}`,
    { details: { field: 'space', rules: removers.map((x) => x.id) } },
  );
}
