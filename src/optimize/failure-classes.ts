import { z } from 'zod';

/**
 * What a failed trial says about itself. The target's own words (a `vllm serve` stderr tail, a harness's
 * message, the HTTP error bodies of a run) are matched against the wording vLLM uses for each failure
 * (test/fixtures/vllm-failures holds a corpus of real messages, V0 and V1 engines), and the numbers the
 * message states are kept as facts: the failure rules (failure-rules.ts) turn them into constraints on
 * the knobs. The order of the patterns matters: an OOM during CUDA-graph capture is a graph failure, and
 * a KV-cache shortfall mentions memory but is not an OOM. Other engines behind a command target say the
 * same things in their own words; llama.cpp's (test/fixtures/vllm-failures/llama-cpp.json) are read too.
 */
export const FAILURE_CLASSES = [
  'oom_load',
  'oom_runtime',
  'kv_cache_too_small',
  'prompt_too_long',
  'cuda_graph',
  'unsupported_quantization',
  'unsupported_dtype',
  'knob_limit',
  'timeout',
  'crash',
  'unknown',
] as const;
export const FailureClass = z.enum(FAILURE_CLASSES);
export type FailureClass = z.infer<typeof FailureClass>;

export const FailureFacts = z.record(z.string(), z.union([z.number(), z.string()]));
export type FailureFacts = z.infer<typeof FailureFacts>;

export const ClassifiedFailure = z.strictObject({
  class: FailureClass,
  /** Numbers and names the message states (prompt_tokens, max_model_len, estimated_max_model_len, quantization…). */
  facts: FailureFacts,
  /** The line that decided the class, trimmed (what a user would grep for in the log). */
  evidence: z.string(),
});
export type ClassifiedFailure = z.infer<typeof ClassifiedFailure>;

/** Plain words per class, for tables and reports. */
export const FAILURE_CLASS_TEXT: Record<FailureClass, string> = {
  oom_load: 'out of memory at load',
  oom_runtime: 'out of memory at run time',
  kv_cache_too_small: 'KV cache too small for max_model_len',
  prompt_too_long: 'prompt longer than max_model_len',
  cuda_graph: 'CUDA-graph capture failed',
  unsupported_quantization: 'quantization not supported on this GPU or checkpoint',
  unsupported_dtype: 'dtype not supported on this GPU',
  knob_limit: 'a knob past a limit the server states',
  timeout: 'time-out',
  crash: 'crash',
  unknown: 'unknown',
};

export interface HttpErrorSample {
  readonly status: number | null;
  readonly message: string;
  readonly count: number;
}

export interface FailureReport {
  /** The catalog code the target reported (LMB_ERR_TRIAL_TIMEOUT, LMB_ERR_SERVER_CRASHED…), when known. */
  readonly code?: string | null;
  /** The target's reason: stderr tail, harness message. */
  readonly reason: string;
  /** Whether the server got as far as serving. */
  readonly started?: boolean | null;
  /** Error bodies of the run's failed requests (a server that started but refused requests). */
  readonly httpErrors?: readonly HttpErrorSample[];
}

const num = (s: string | undefined): number | undefined => {
  if (s === undefined) return undefined;
  const v = Number(s.replaceAll(',', ''));
  return Number.isFinite(v) ? v : undefined;
};

type Facts = Record<string, number | string>;
const put = (facts: Facts, key: string, v: number | string | undefined): void => {
  if (v !== undefined) facts[key] = v;
};

interface Pattern {
  readonly class: FailureClass;
  readonly re: RegExp;
  readonly facts?: (m: RegExpMatchArray, text: string, f: Facts) => void;
}

const N = '([\\d,]+(?:\\.\\d+)?)';

/** A refusal that states the prompt and the completion separately: the request is their sum. */
function promptAndOutput(f: Facts, prompt: string | undefined, output: string | undefined): void {
  const p = num(prompt);
  const o = num(output);
  put(f, 'prompt_tokens', p);
  put(f, 'output_tokens', o);
  if (p !== undefined && o !== undefined) f['requested_tokens'] = p + o;
}

/** Numbers of a prompt-length refusal, whichever of vLLM's wordings carried it. */
function promptFacts(text: string, f: Facts): void {
  // The completion count can be negative (vLLM subtracts the prompt from the limit when max_tokens is unset).
  let m = new RegExp(`maximum context length is ${N} tokens\\. However, you requested ${N} tokens(?: \\(${N} in the \\w+, (-?[\\d,]+) in the completion\\))?`, 'i').exec(text);
  if (m !== null) {
    put(f, 'max_model_len', num(m[1]));
    put(f, 'requested_tokens', num(m[2]));
    put(f, 'prompt_tokens', num(m[3]));
    put(f, 'output_tokens', num(m[4]));
    return;
  }
  m = new RegExp(`prompt \\(${N} tokens\\) \\+ max_tokens \\(${N}\\)`, 'i').exec(text);
  if (m !== null) {
    promptAndOutput(f, m[1], m[2]);
    return;
  }
  m = new RegExp(`You passed ${N} input tokens and requested ${N} output tokens\\. However, the model's context length is only ${N}`, 'i').exec(text);
  if (m !== null) {
    promptAndOutput(f, m[1], m[2]);
    put(f, 'max_model_len', num(m[3]));
    return;
  }
  // vLLM 0.10–0.15 with max_tokens set: "'max_tokens' or 'max_completion_tokens' is too large: 200. This
  // model's maximum context length is 4096 tokens and your request has 4000 input tokens (200 > 4096 - 4000)".
  m = new RegExp(`is too large: ${N}\\. This model's maximum context length is ${N} tokens and your request has ${N} input tokens`, 'i').exec(text);
  if (m !== null) {
    promptAndOutput(f, m[3], m[1]);
    put(f, 'max_model_len', num(m[2]));
    return;
  }
  m = new RegExp(`maximum context length is ${N} tokens\\. However, your request has ${N} input tokens`, 'i').exec(text);
  if (m !== null) {
    put(f, 'max_model_len', num(m[1]));
    put(f, 'prompt_tokens', num(m[2]));
    put(f, 'requested_tokens', num(m[2]));
    return;
  }
  m = new RegExp(`prompt \\(total length ${N}\\) is too long to fit into the model \\(context length ${N}\\)`, 'i').exec(text);
  if (m !== null) {
    put(f, 'prompt_tokens', num(m[1]));
    put(f, 'requested_tokens', num(m[1]));
    put(f, 'max_model_len', num(m[2]));
    return;
  }
  m = new RegExp(`prompt \\(length ${N}\\) is longer than the maximum model length of ${N}`, 'i').exec(text);
  if (m !== null) {
    put(f, 'prompt_tokens', num(m[1]));
    put(f, 'requested_tokens', num(m[1]));
    put(f, 'max_model_len', num(m[2]));
    return;
  }
  m = new RegExp(`(?:prompt|input)[^\\d]{0,40}?${N} tokens\\)? is too long and exceeds (?:the )?limit of ${N}`, 'i').exec(text);
  if (m !== null) {
    put(f, 'prompt_tokens', num(m[1]));
    put(f, 'requested_tokens', num(m[1]));
    put(f, 'max_model_len', num(m[2]));
    return;
  }
  // llama-server: "request (5000 tokens) exceeds the available context size (4096 tokens)", or the older
  // bare sentence with the numbers as fields of the error body. Its context is one slot's.
  m = new RegExp(`request \\(${N} tokens\\) exceeds the available context size \\(${N} tokens\\)`, 'i').exec(text);
  if (m !== null) {
    put(f, 'prompt_tokens', num(m[1]));
    put(f, 'requested_tokens', num(m[1]));
    put(f, 'max_model_len', num(m[2]));
    return;
  }
  if (/exceeds the available context size|exceed_context_size_error/i.test(text)) {
    const p = num(new RegExp(`"n_prompt_tokens"\\s*:\\s*${N}`).exec(text)?.[1]);
    put(f, 'prompt_tokens', p);
    put(f, 'requested_tokens', p);
    put(f, 'max_model_len', num(new RegExp(`"n_ctx"\\s*:\\s*${N}`).exec(text)?.[1]));
    return;
  }
  m = new RegExp(`prompts? of ${N} tokens`, 'i').exec(text);
  if (m !== null) put(f, 'prompt_tokens', num(m[1]));
  m = new RegExp(`max_model_len (?:of |= ?|\\()?${N}`, 'i').exec(text);
  if (m !== null) put(f, 'max_model_len', num(m[1]));
}

/** Server parameters whose stated bound is a bound on one knob: other engines' names for vLLM's knobs. */
const BOUND_PARAMS: Readonly<Record<string, string>> = { n_seq_max: 'max_num_seqs', n_parallel: 'max_num_seqs' };

const PATTERNS: readonly Pattern[] = [
  // CUDA graphs first: their OOMs and stream errors mention memory or CUDA, but the knob is the graphs.
  { class: 'cuda_graph', re: /capture_end\(\)[\s\S]{0,600}?(?:CUDA error|out of memory)|error during capture|VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS|(?:out of memory|error)[^\n]{0,80}(?:during|while) (?:cuda ?graph|graph) captur|cuda ?graph captur\w*[^\n]{0,80}(?:fail|error|out of memory)|operation not permitted when stream is capturing|cudaErrorStreamCaptur\w+|capture_sizes?[^\n]{0,60}(?:must|should|exceed)/i },
  {
    class: 'kv_cache_too_small',
    re: /KV cache is needed, which is larger than the available KV cache memory|larger than the maximum number of tokens that can be stored in KV cache|No available memory for the cache blocks|insufficient (?:memory|space) for (?:the )?KV cache|num_gpu_blocks[^\n]{0,40}(?:<=|is) 0|failed to allocate buffer for kv cache|llama_kv_cache_init\(\) failed/i,
    facts: (_m, text, f) => {
      let m = new RegExp(`max seq len \\(${N}\\), \\(${N} GiB KV cache is needed, which is larger than the available KV cache memory \\(${N} GiB\\)`, 'i').exec(text);
      if (m !== null) {
        put(f, 'max_model_len', num(m[1]));
        put(f, 'needed_gib', num(m[2]));
        put(f, 'available_gib', num(m[3]));
      }
      m = new RegExp(`estimated maximum model length is ${N}`, 'i').exec(text);
      if (m !== null) put(f, 'estimated_max_model_len', num(m[1]));
      m = new RegExp(`max seq len \\(${N}\\) is larger than the maximum number of tokens that can be stored in KV cache \\(${N}\\)`, 'i').exec(text);
      if (m !== null) {
        put(f, 'max_model_len', num(m[1]));
        put(f, 'estimated_max_model_len', num(m[2]));
      }
      if (/No available memory for the cache blocks/i.test(text)) f['kind'] = 'no_blocks';
      // llama.cpp allocates the whole cache (context × slots) at start-up and stops when the allocation fails.
      if (/failed to allocate buffer for kv cache|llama_kv_cache_init\(\) failed/i.test(text)) f['kind'] = 'alloc';
    },
  },
  {
    class: 'prompt_too_long',
    re: /maximum context length is [\d,]+ tokens|model's context length is only [\d,]+ tokens|too long to fit into the model|max_tokens must be at least 1, got -|is longer than the maximum model length|is too long and exceeds (?:the )?limit|maximum context length is exceeded|prompts? of [\d,]+ tokens|max_model_len[^\n]{0,60}rejects[^\n]{0,40}long requests|exceeds? (?:the )?max(?:imum)?[ _]model[ _]len|exceeds the available context size|exceed_context_size_error/i,
    facts: (_m, text, f) => promptFacts(text, f),
  },
  {
    class: 'unsupported_dtype',
    re: /Bfloat16 is only supported on GPUs with compute capability|bfloat16 is not supported for quantization method|type fp8\w* not supported in this architecture|(?:kv[_ -]cache[_ -]dtype|fp8(?:_e[45]m[23])? kv[- ]cache)[^\n]{0,80}(?:not supported|unsupported)|dtype[^\n]{0,40}is not supported/i,
    facts: (_m, text, f) => {
      if (/bfloat16/i.test(text)) f['dtype'] = 'bfloat16';
      const kv = /(fp8(?:_e[45]m[23])?)[^\n]{0,20}kv[- _]cache|kv[_ -]cache[_ -]dtype[^\n]{0,10}?(fp8(?:_e[45]m[23])?)/i.exec(text);
      if (kv !== null) f['kv_cache_dtype'] = kv[1] ?? kv[2] ?? 'fp8';
      // vLLM states capabilities as 7.5 here and as 75 elsewhere: kept in the integer form.
      const cap = num(/compute capability (?:of )?(\d+(?:\.\d+)?)\./i.exec(text.replace(/at least \d+(?:\.\d+)?/i, ''))?.[1]);
      if (cap !== undefined) f['capability'] = cap < 20 ? Math.round(cap * 10) : cap;
    },
  },
  {
    class: 'unsupported_quantization',
    re: /quantization method \S+ is not supported for the current GPU|Unknown quantization method|Quantization method specified in the model config \(\S+\) does not match|(?:quantization|\bfp8\b|awq|gptq|marlin)[^\n]{0,80}(?:not supported|requires|Minimum capability)|Minimum capability: \d+/i,
    facts: (_m, text, f) => {
      const m = /quantization method (\S+) is not supported/i.exec(text) ?? /Unknown quantization method:? ['"`]?([\w-]+)/i.exec(text) ?? /`quantization` argument \((\S+?)\)/i.exec(text);
      if (m !== null) f['quantization'] = (m[1] ?? '').replace(/[.'"`]+$/, '');
      put(f, 'min_capability', num(/Minimum capability:? (\d+)/i.exec(text)?.[1]));
      put(f, 'capability', num(/Current capability:? (\d+)/i.exec(text)?.[1]));
    },
  },
  {
    class: 'oom_load',
    re: /out of memory while loading|less than desired GPU memory utilization|(?:CUDA|torch\.\w*)\s*out of memory|OutOfMemoryError|CUDA error: out of memory/i,
    facts: (_m, text, f) => {
      const u = /desired GPU memory utilization \(([\d.]+)/i.exec(text);
      if (u !== null) {
        f['kind'] = 'utilization';
        put(f, 'gpu_memory_utilization', num(u[1]));
      } else if (/while loading|load(?:ing)? (?:model )?weights|load_model/i.test(text)) f['kind'] = 'weights';
      put(f, 'tried_mib', num(/Tried to allocate ([\d.]+) MiB/i.exec(text)?.[1]));
      const g = /Tried to allocate ([\d.]+) GiB/i.exec(text);
      if (g !== null) put(f, 'tried_mib', (num(g[1]) ?? 0) * 1024);
    },
  },
  {
    // A server that states the bound it enforces ("n_seq_max must be <= 64", llama.cpp's slot limit): the
    // rule is that bound, on the knob the parameter is named for.
    class: 'knob_limit',
    re: new RegExp(`\\b(${Object.keys(BOUND_PARAMS).join('|')})\\s+must be\\s*(<=|<|>=|>)\\s*${N}`, 'i'),
    facts: (m, _text, f) => {
      const param = (m[1] ?? '').toLowerCase();
      put(f, 'param', param);
      put(f, 'knob', BOUND_PARAMS[param]);
      put(f, 'bound_op', m[2]);
      put(f, 'bound', num(m[3]));
    },
  },
  { class: 'timeout', re: /timed? ?out|time-out|not healthy after|Watchdog caught collective operation timeout|deadline exceeded|outlived the [\d,]+ ms/i },
  { class: 'crash', re: /Segmentation fault|core dumped|SIGSEGV|SIGKILL|SIGABRT|killed|exited (?:-9|137|139|134)\b|EngineDeadError|EngineCore encountered|NCCL error|illegal memory access|died|Fatal Python error|fatal signal|Engine core initialization failed/i },
];

const ERRORISH = /error|fail|exception|abort|fatal|must be|invalid|cannot|unable|refused|exiting/i;

/** The first line of `text` that `re` matches, trimmed to 300 characters. */
function evidenceLine(text: string, re: RegExp): string {
  const flags = re.flags.replace('g', '');
  const lines = text.split('\n');
  for (const line of lines) if (new RegExp(re.source, flags).test(line)) return line.trim().slice(0, 300);
  // A match across lines (a traceback): its last error line says the most.
  const err = lines.filter((l) => /error|exception/i.test(l)).at(-1);
  return (err ?? text).trim().slice(0, 300);
}

function matchText(text: string, started: boolean | null | undefined): ClassifiedFailure | null {
  for (const p of PATTERNS) {
    const m = p.re.exec(text);
    if (m === null) continue;
    const facts: Facts = {};
    p.facts?.(m, text, facts);
    // An OOM once the server was serving is a run-time OOM (vLLM prints the same torch error either way).
    const cls: FailureClass = p.class === 'oom_load' && started === true && facts['kind'] === undefined ? 'oom_runtime' : p.class;
    return { class: cls, facts, evidence: evidenceLine(text, p.re) };
  }
  return null;
}

/**
 * Classifies one failure from everything the target said. HTTP error bodies are read first when the
 * server started (a server that serves and refuses long prompts did start), then the reason text; the
 * catalog code decides only what the words do not (a time-out or crash with no recognisable message).
 */
export function classifyFailure(report: FailureReport): ClassifiedFailure {
  for (const e of [...(report.httpErrors ?? [])].sort((a, b) => b.count - a.count)) {
    const hit = matchText(e.message, true);
    if (hit !== null) return { ...hit, facts: { ...hit.facts, requests: e.count, ...(e.status === null ? {} : { http_status: e.status }) } };
  }
  const hit = matchText(report.reason, report.started);
  if (hit !== null) return hit;
  const said = report.reason.trim() === '' ? (report.httpErrors?.[0]?.message ?? '') : report.reason;
  const lines = said.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  // An unrecognised log's first line is often a banner; its last line that reads like an error says what
  // went wrong, and is what two identical failures are recognised by (failure-rules.ts).
  const evidence = (lines.findLast((l) => ERRORISH.test(l)) ?? lines[0] ?? '').slice(0, 300);
  if (report.code === 'LMB_ERR_TRIAL_TIMEOUT') return { class: 'timeout', facts: {}, evidence };
  if (report.code === 'LMB_ERR_SERVER_CRASHED') return { class: 'crash', facts: {}, evidence };
  return { class: 'unknown', facts: {}, evidence };
}
