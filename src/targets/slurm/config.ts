import { z } from 'zod';
import { argvCommand } from '../argv.js';

/**
 * The Slurm target's settings (`--slurm-config FILE`, or a `kind: slurm` target profile in the
 * service's config). Values that end up on sbatch's command line or in #SBATCH lines are restricted
 * to what Slurm itself accepts there, so none can smuggle another option or a shell word; the job
 * script quotes the rest. `setup` is the one place written as shell, by design: it is the cluster
 * operator's own lines (`module load …`), read from this file, never from a request.
 */

/** Partition, account and QOS names: Slurm's own character set, no whitespace. */
const slurmName = z.string().regex(/^[A-Za-z0-9_.:@+-]{1,128}$/, 'letters, digits and _ . : @ + - only (a Slurm name)');

/** Slurm's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S (sbatch --time). */
const slurmTime = z.string().regex(/^(\d+-\d{1,2}(:\d{1,2}){0,2}|\d+(:\d{1,2}){0,2})$/, 'a Slurm time limit: minutes, MM:SS, HH:MM:SS or D-HH:MM:SS');

/** One #SBATCH line: an option, no newline (sbatch stops reading #SBATCH lines at the first command). */
const sbatchOption = z
  .string()
  .regex(/^--?[A-Za-z][\w-]*(=\S.*)?$|^--?[A-Za-z][\w-]* \S.*$/, 'an sbatch option such as --exclusive or --mem=64G')
  .refine((s) => !/[\r\n]/.test(s), 'one line');

const setupLine = z.string().refine((s) => !/[\r\n\0]/.test(s), 'one line, no newline or NUL');

export const SlurmEngine = z.enum(['vllm', 'sim']);
export type SlurmEngine = z.infer<typeof SlurmEngine>;

export const SlurmConfig = z.strictObject({
  partition: slurmName,
  /** The job's wall-clock limit (sbatch --time): a trial outliving it ends as a trial time-out. */
  time_limit: slurmTime,
  /** `vllm` on real GPU nodes; `sim` runs the embedded simulator inside the job (tests, trying it out). */
  engine: SlurmEngine,
  /** A folder on the cluster's shared filesystem, seen at the same path by this machine and the nodes. */
  work_dir: z.string().min(1).refine((s) => s.startsWith('/'), 'an absolute path (the nodes see it at the same path)').refine((s) => !/[\r\n\0%]/.test(s), 'no newline, NUL or % (Slurm expands % in file names)'),
  /** Jobs queued or running at once; defaults to the study's --parallel. */
  max_jobs: z.int().min(1).max(256).optional(),
  account: slurmName.optional(),
  qos: slurmName.optional(),
  /** sbatch --constraint (node features): `a100|h100`, `[rack1&ib]`. */
  constraint: z.string().regex(/^[A-Za-z0-9_.:@+\-&|*[\]()!,]{1,256}$/, 'node features joined by & | , with [ ] ( ) * only').optional(),
  /**
   * The GPU request, `{gpus}` replaced by the trial's TP × PP × DP (sbatch --gres): `gpu:{gpus}` by
   * default, `gpu:h100:{gpus}` for a typed resource.
   */
  gres: z.string().regex(/^[A-Za-z0-9_.:-]*\{gpus\}[A-Za-z0-9_.:-]*$/, 'a gres string containing {gpus}, e.g. gpu:{gpus} or gpu:h100:{gpus}').default('gpu:{gpus}'),
  /** More #SBATCH lines, each one option (`--exclusive`, `--mem=0`, `--cpus-per-task=16`). */
  extra_sbatch: z.array(sbatchOption).max(64).default([]),
  /** Shell lines run in the job before the trial: `module load cuda/12.4`, `source venv/bin/activate`. */
  setup: z.array(setupLine).max(200).default([]),
  /**
   * The command that starts vLLM on the node (argv, no shell): `vllm`, or `apptainer exec --nv vllm.sif vllm`.
   * Split when the config is read, so a stray quote names this line of the file.
   */
  vllm: argvCommand.default('vllm'),
  /** How the node runs lm-bench (argv); by default the Node.js and the checkout this controller runs from. */
  lm_bench: argvCommand.optional(),
  /** Seconds a `vllm serve` may take to become healthy inside the job. */
  startup_timeout_s: z.number().positive().max(86_400).default(900),
  /** How often the controller asks Slurm about its jobs (one squeue for all of them). */
  poll_interval_s: z.number().min(0.1).max(600).default(5),
  /** Resubmissions of a trial whose job died for the cluster's reasons (PREEMPTED, NODE_FAIL, BOOT_FAIL). */
  max_resubmits: z.int().min(0).max(10).default(2),
  /** Environment variables set in the job (names only letters, digits, _). */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), z.string().refine((s) => !s.includes('\0'), 'no NUL')).default({}),
});
export type SlurmConfig = z.infer<typeof SlurmConfig>;
export type SlurmConfigInput = z.input<typeof SlurmConfig>;
