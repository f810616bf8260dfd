/**
 * The one catalog of lm-bench errors.
 *
 * Every error the project raises on purpose has a stable code here, a kind (user, operational,
 * unexpected — after n8n's taxonomy), a one-line title for docs, a CLI exit status and an HTTP status.
 * Messages may change between versions; codes may not. `docs/errors.md` documents every code and
 * `test/errors.test.ts` keeps the two in step.
 *
 * Exit statuses: 0 ok, 1 operational failure or partial rejection, 2 bad input (usage), 3 the
 * configuration failed to start (a simulated or real vLLM refused it), 70 internal bug, 130 interrupted.
 */

export const ErrorKind = {
  user: 'user',
  operational: 'operational',
  unexpected: 'unexpected',
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

interface ErrorDef {
  readonly kind: ErrorKind;
  readonly title: string;
  readonly exitCode: number;
  readonly httpStatus: number;
}

const user = (title: string, httpStatus = 400, exitCode = 2): ErrorDef => ({
  kind: 'user',
  title,
  exitCode,
  httpStatus,
});
const operational = (title: string, httpStatus = 503, exitCode = 1): ErrorDef => ({
  kind: 'operational',
  title,
  exitCode,
  httpStatus,
});
const unexpected = (title: string): ErrorDef => ({ kind: 'unexpected', title, exitCode: 70, httpStatus: 500 });

export const ERROR_CATALOG = {
  /* Input: arguments, files, names */
  LMB_ERR_INVALID_ARGUMENT: user('A command-line flag or request field has an invalid value'),
  LMB_ERR_UNKNOWN_COMMAND: user('No such lm-bench command'),
  LMB_ERR_FILE_NOT_FOUND: user('A file named on the command line or in a config does not exist', 404),
  LMB_ERR_CONFIG_INVALID: user('A YAML or JSON file does not match its schema (file, line and field are named)'),
  LMB_ERR_UNKNOWN_GPU: user('The GPU is not in data/hardware.yaml'),
  LMB_ERR_UNKNOWN_MODEL: user('The model is not in the catalog, nor a config.json path, nor a Hugging Face repo in the local cache or on the hub'),
  LMB_ERR_HUB_UNAUTHORIZED: user('The Hugging Face hub refused the request: a gated or private repo needs HF_TOKEN', 401),
  LMB_ERR_UNSUPPORTED_ARCHITECTURE: user("The model's config.json names an architecture lm-bench cannot derive a ModelSpec from"),
  LMB_ERR_MODEL_CONFIG_INVALID: user("A model's config.json lacks a field lm-bench needs or holds an absurd value (the field is named)"),
  LMB_ERR_UNKNOWN_KNOB: user('The knob is not a vLLM engine argument lm-bench knows'),
  LMB_ERR_KNOB_OUT_OF_DOMAIN: user('A knob value lies outside what vLLM (or the search space) accepts'),
  LMB_ERR_WORKLOAD_INVALID: user('The workload definition is inconsistent'),
  LMB_ERR_SPACE_INVALID: user('The search-space file is invalid'),
  LMB_ERR_RULE_INVALID: user('A constraint rule expression does not compile or does not yield a boolean'),
  LMB_ERR_SPACE_EMPTY: user('No configuration of the search space survives the constraint rules'),
  LMB_ERR_ENDPOINT_NOT_LOOPBACK: user('Load tests only target loopback addresses'),
  LMB_ERR_INGEST_UNKNOWN_FORMAT: user('The file is not in any format lm-bench can ingest', 400, 1),
  LMB_ERR_INGEST_REJECTED: user('The file was rejected by ingest; nothing of it was stored', 400, 1),
  LMB_ERR_TRACE_INVALID: user('A request trace cannot be read: the file, line and field are named', 400, 1),
  LMB_ERR_INGEST_CONTEXT_MISSING: user('A run lacks the server config, GPU or model needed to learn from it', 400, 1),
  LMB_ERR_STUDY_NOT_FOUND: user('No study by that name or id', 404),
  LMB_ERR_STUDY_EXISTS: user('A study by that name already exists with different settings', 409),
  LMB_ERR_STUDY_BUSY: user('Another process on this machine is running that study', 409),
  LMB_ERR_TRIAL_FINISHED: user('A finished trial cannot be changed', 409),
  LMB_ERR_NOT_FOUND: user('No such resource', 404),
  LMB_ERR_MODEL_NOT_TRAINED: user('No trained surrogate model for this question; train one first', 404),
  LMB_ERR_HISTORY_TOO_THIN: user('Not enough history to train or to trust a model', 422),
  LMB_ERR_TARGET_PROFILE_UNKNOWN: user('The target profile is not in the service configuration'),
  LMB_ERR_UNAUTHORIZED: user('A bearer token is required for this request', 401),
  LMB_ERR_BODY_TOO_LARGE: user('The request body is too large', 413),
  LMB_ERR_RATE_LIMITED: user('Too many requests', 429),

  /* A configuration that does not start is an outcome, not a crash: the tuner learns from it. */
  LMB_ERR_STARTUP_FAILED: {
    kind: 'operational',
    title: 'The vLLM configuration failed to start (validation or memory)',
    exitCode: 3,
    httpStatus: 422,
  },

  /* Operational: the world outside misbehaved */
  LMB_ERR_ENDPOINT_UNREACHABLE: operational('The endpoint does not answer', 502),
  LMB_ERR_HUB_UNAVAILABLE: operational("The Hugging Face hub did not answer with the model's config.json (an error, a time-out, no network)", 502),
  LMB_ERR_ENDPOINT_BAD_RESPONSE: operational('The endpoint answered with something that is not an OpenAI-compatible reply', 502),
  LMB_ERR_TARGET_LAUNCH_FAILED: operational('The target server exited or never became healthy', 502),
  LMB_ERR_SERVER_CRASHED: operational('The server started, then died under load (e.g. a CUDA out-of-memory error)', 502),
  LMB_ERR_REQUESTS_REFUSED: operational("The server started but refused the workload's requests (e.g. prompts longer than max_model_len)", 502),
  LMB_ERR_REQUESTS_LOST: operational('The server lost more of a trial\'s requests than a measurement can stand (errors, dropped connections, time-outs)', 502),
  LMB_ERR_TRIAL_TIMEOUT: operational('A trial outlived its time limit and was stopped', 504),
  LMB_ERR_COMMAND_FAILED: operational('A user harness command exited non-zero or wrote no result', 502),
  LMB_ERR_SLURM_UNAVAILABLE: operational('Slurm does not answer (sbatch, squeue or scancel missing or failing)', 503),
  LMB_ERR_SLURM_SUBMIT_FAILED: operational("sbatch refused a trial's job (partition, account, GPU request)", 502),
  LMB_ERR_SLURM_JOB_LOST: operational("A trial's job ended for the cluster's reasons (preempted, node failure) too often, or Slurm forgot it with no result left", 502),
  LMB_ERR_TRIAL_CANCELLED: operational("A trial's job was cancelled outside lm-bench (scancel)", 409),
  LMB_ERR_STORE_SCHEMA_NEWER: operational('The database was written by a newer lm-bench', 500),
  LMB_ERR_STORE_FAILED: operational('The SQLite store failed', 500),
  LMB_ERR_WORKER_FAILED: operational('A worker thread failed', 500),
  LMB_ERR_LISTEN_FAILED: operational('A server could not listen on the address it was given', 503),
  LMB_ERR_INTERRUPTED: operational('Interrupted by a signal', 503, 130),

  /* Unexpected: bugs */
  LMB_ERR_INTERNAL: unexpected('An internal error (a bug); please report it'),
} as const satisfies Record<string, ErrorDef>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface LmBenchErrorOptions {
  /** Structured context for JSON output and HTTP bodies (field, file, line, …). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** The one error class. Identity is the `code`; `kind`, statuses and title come from the catalog. */
export class LmBenchError extends Error {
  readonly code: ErrorCode;
  readonly kind: ErrorKind;
  readonly exitCode: number;
  readonly httpStatus: number;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: LmBenchErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const def: ErrorDef = ERROR_CATALOG[code];
    this.name = 'LmBenchError';
    this.code = code;
    this.kind = def.kind;
    this.exitCode = def.exitCode;
    this.httpStatus = def.httpStatus;
    this.details = options.details ?? {};
  }

  toJSON(): { code: ErrorCode; kind: ErrorKind; message: string; details: Record<string, unknown> } {
    return { code: this.code, kind: this.kind, message: this.message, details: this.details };
  }
}

export function isLmBenchError(err: unknown, code?: ErrorCode): err is LmBenchError {
  return err instanceof LmBenchError && (code === undefined || err.code === code);
}

/** Wraps anything thrown into an LmBenchError, keeping the original as `cause`. */
export function toLmBenchError(err: unknown): LmBenchError {
  if (err instanceof LmBenchError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new LmBenchError('LMB_ERR_INTERNAL', message, { cause: err });
}

export function assertNever(x: never, what = 'value'): never {
  throw new LmBenchError('LMB_ERR_INTERNAL', `unhandled ${what}: ${JSON.stringify(x)}`);
}
