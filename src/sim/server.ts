import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { HardwareRef, ModelSpec, PowerProfile, ServerConfig, SimProfile } from '../domain/index.js';
import { defaultCatalog, type Catalog } from '../catalog/index.js';
import { LmBenchError } from '../errors.js';
import { listenError } from '../util/listen.js';
import { createRng } from '../util/rng.js';
import { RealtimeEngine } from './realtime.js';
import { DEFAULT_NOISE, type NoiseModel } from './scheduler.js';
import { metricsText } from './server-metrics.js';
import type { RuntimeFailure } from '../physics/failure.js';
import { runtimeOomFailure, runtimeOomPerRequest } from '../physics/runtime-oom.js';
import { startupCheck, startupPhases } from '../physics/startup.js';
import { tokenIds, tokenText } from './tokenizer.js';
import { messageText, readPrompts } from './prompt.js';
import { readSampling, outputBudget } from './sampling.js';
import { chatLogprobs, ChoiceText, completionLogprobs, planChoice } from './choices.js';
import { defaultPowerProfile } from './power-profile.js';

/**
 * `lm-bench sim serve`: the simulated engine behind an OpenAI-compatible HTTP server (node:http)
 * that streams exactly like vLLM (docs/references/load-runners.md#vllm-streaming): SSE `data:` events, the role chunk
 * first for chat, `finish_reason` on the last token, a final `choices: []` usage chunk when
 * `stream_options.include_usage`, then `data: [DONE]`. The request fields are read as vLLM reads them
 * (`sampling.ts`: completions' max_tokens 16 when unset, min_tokens, n, stop strings, logprobs, vLLM's 400
 * for what it refuses, prompt + max_tokens over max_model_len included); a batch of prompts or n > 1 is one
 * engine request per choice (`choices.ts`). Prompt tokens come from the tokenizer stand-in (`tokenizer.ts`).
 *
 * Like `vllm serve`, it binds its port at once but answers nothing, /health included, until its
 * simulated start-up (physics/startup.ts: init, weight load, profile run, torch.compile, CUDA-graph
 * capture) has passed: `startupScale` × that time ÷ `speed` of real time (0, the default here, for
 * tests; the CLI waits it out in full). Under load it can die of a run-time CUDA OOM
 * (physics/runtime-oom.ts, one seeded draw per request): it logs torch's message, drops every open
 * stream and calls `onCrash`, as vLLM's engine core dying takes the API server with it.
 */
export interface SimServerOptions {
  readonly config: ServerConfig;
  readonly hardware: HardwareRef;
  readonly model: string | ModelSpec;
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  /** Virtual seconds per real second (default 1). */
  readonly speed?: number | undefined;
  readonly seed?: number | undefined;
  readonly catalog?: Catalog | undefined;
  readonly servedModelName?: string | undefined;
  readonly noise?: NoiseModel | undefined;
  /** Serve https with this PEM certificate and key (vLLM's --ssl-certfile / --ssl-keyfile). */
  readonly tls?: { readonly cert: string; readonly key: string } | undefined;
  /** Require `Authorization: Bearer <key>` on /v1 routes, as vLLM's --api-key does. */
  readonly apiKey?: string | undefined;
  /** The efficiencies to price steps with (default: the catalog's for this GPU and release). */
  readonly profile?: SimProfile | undefined;
  /** The vLLM release imitated (default: a current one; domain/vllm-release.ts). */
  readonly vllmVersion?: string | undefined;
  /** The GPU power model (default: data/sim-profile.yaml's; null: no power or energy on /metrics). */
  readonly power?: PowerProfile | null | undefined;
  /** Share of the simulated start-up time to wait out (default 0: ready at once). */
  readonly startupScale?: number | undefined;
  /** Draw run-time OOM crashes (default true). */
  readonly runtimeFailures?: boolean | undefined;
  /** vLLM-style log lines (start-up phases, the crash); default: dropped. */
  readonly log?: ((line: string) => void) | undefined;
  /** Called once when the simulated engine dies under load; the server has stopped answering. */
  readonly onCrash?: ((failure: RuntimeFailure) => void) | undefined;
}

export interface SimServer {
  readonly url: string;
  readonly port: number;
  readonly engine: RealtimeEngine;
  /** Resolves when the simulated start-up is over and the server answers. */
  readonly ready: Promise<void>;
  /** Simulated start-up time (virtual seconds). */
  readonly startupTimeS: number;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const PHASE_LOG: Record<ReturnType<typeof startupPhases>[number]['phase'], string> = {
  init: 'Process, NCCL and worker initialisation',
  load_weights: 'Loading weights',
  profile: 'Memory profiling',
  torch_compile: 'torch.compile',
  cudagraph_capture: 'Graph capturing',
};

type Json = Record<string, unknown>;

/** The methods each route answers (vLLM's /ping takes both). */
const ROUTE_METHODS: Readonly<Record<string, readonly string[]>> = {
  '/health': ['GET'],
  '/ping': ['GET', 'POST'],
  '/v1/models': ['GET'],
  '/version': ['GET'],
  '/metrics': ['GET'],
  '/tokenize': ['POST'],
  '/v1/completions': ['POST'],
  '/v1/chat/completions': ['POST'],
};

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, message: string, type = 'BadRequestError', param: string | null = null): void {
  sendJson(res, status, { error: { message, type, param, code: status } });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY_BYTES) throw new Error('request body too large');
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A request's JSON object body, or null once the 400 for a body that is none has been sent. */
async function readJsonBody(req: IncomingMessage, res: ServerResponse): Promise<Json | null> {
  let body: unknown;
  try {
    body = JSON.parse(await readBody(req));
  } catch (err) {
    sendError(res, 400, `invalid JSON body: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    sendError(res, 400, 'the request body must be a JSON object');
    return null;
  }
  return body as Json;
}

export async function startSimServer(opts: SimServerOptions): Promise<SimServer> {
  const catalog = opts.catalog ?? defaultCatalog();
  const hw = catalog.gpu(opts.hardware.gpu);
  const model = typeof opts.model === 'string' ? catalog.model(opts.model) : opts.model;
  const start = startupCheck(opts.config, { hardware: hw, gpuCount: opts.hardware.count, model, vllmVersion: opts.vllmVersion });
  if (!start.ok) {
    throw new LmBenchError('LMB_ERR_STARTUP_FAILED', `${start.failure.rule} (${start.failure.phase}): ${start.failure.message}`, {
      details: { rule: start.failure.rule, phase: start.failure.phase },
    });
  }
  const { resolved, memory } = start;
  const served = opts.servedModelName ?? model.hf_name;
  const names = new Set([served]);
  const rng = createRng(opts.seed ?? 0);
  const lengthRng = rng.fork('natural-length');
  const speed = opts.speed ?? 1;
  const engine = new RealtimeEngine({
    resolved,
    memory,
    hw,
    model,
    profile: opts.profile ?? catalog.profileFor(hw, opts.vllmVersion),
    power: opts.power === undefined ? defaultPowerProfile() : opts.power,
    gpuCount: opts.hardware.count,
    speed,
    noise: opts.noise ?? DEFAULT_NOISE,
    rng: rng.fork('engine'),
    clock: { nowMs: () => performance.now(), setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) },
  });
  const createdS = Math.floor(Date.now() / 1000);
  let counter = 0;
  const log = opts.log ?? ((): void => {});
  const oomRng = rng.fork('runtime-oom');
  const oomPerRequest = opts.runtimeFailures === false ? 0 : runtimeOomPerRequest(memory);
  let accepted = 0;
  let crashed = false;
  /** Finished requests by why they stopped (vLLM's `request_success_total{finished_reason}`). */
  const finishReasons = { stop: 0, length: 0 };
  const openStreams = new Set<ServerResponse>();
  const crash = (): void => {
    crashed = true;
    const failure = runtimeOomFailure(resolved, hw, memory, engine.nowS(), accepted);
    log(`ERROR [core.py] EngineCore encountered a fatal error.\n${failure.message}`);
    log('ERROR [async_llm.py] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.');
    for (const r of openStreams) r.destroy();
    engine.close();
    opts.onCrash?.(failure);
  };

  const generate = (req: IncomingMessage, res: ServerResponse, body: Json, chat: boolean): void => {
    const requested = body['model'];
    if (requested !== undefined && (typeof requested !== 'string' || !names.has(requested))) {
      sendError(res, 404, `The model \`${typeof requested === 'string' ? requested : JSON.stringify(requested)}\` does not exist.`, 'NotFoundError');
      return;
    }
    const prompts = readPrompts(body, chat, resolved.block_size);
    if (typeof prompts === 'string') {
      sendError(res, 400, prompts);
      return;
    }
    const sampling = readSampling(body, chat);
    if (typeof sampling === 'string') {
      sendError(res, 400, sampling);
      return;
    }
    // Every prompt is checked against the context before any reaches the engine, as vLLM's renderer does.
    const budgets: number[] = [];
    for (const p of prompts) {
      const b = outputBudget(p.tokens, sampling.maxTokens, resolved.max_model_len);
      if (typeof b !== 'number') {
        sendError(res, 400, b.message, 'BadRequestError', b.param);
        return;
      }
      // SamplingParams checks min_tokens against the max_tokens the context left, when the request set none.
      if (sampling.minTokens > b) {
        sendError(res, 400, `min_tokens must be less than or equal to max_tokens=${b}, got ${sampling.minTokens}.`);
        return;
      }
      budgets.push(b);
    }
    // n choices per prompt, index prompt × n + sample (vLLM's order); each its own engine request.
    const n = sampling.n;
    const choices = prompts.flatMap((prompt, pi) =>
      Array.from({ length: n }, (_, j) => ({ index: pi * n + j, prompt, plan: planChoice(sampling, budgets[pi] as number, () => lengthRng.normal()) })),
    );
    for (let i = 0; i < choices.length; i++) {
      if (oomPerRequest > 0 && oomRng.next() < oomPerRequest) {
        crash();
        res.destroy();
        return;
      }
    }
    accepted += choices.length;
    const { stream, includeUsage, logprobs } = sampling;
    const headerId = req.headers['x-request-id'];
    const id = `${chat ? 'chatcmpl' : 'cmpl'}-${typeof headerId === 'string' ? headerId : `sim${++counter}`}`;
    const created = createdS;
    const promptTokens = prompts.reduce((a, p) => a + p.tokens, 0);
    const completionTokens = choices.reduce((a, c) => a + c.plan.tokens, 0);
    const usage = { prompt_tokens: promptTokens, total_tokens: promptTokens + completionTokens, completion_tokens: completionTokens, prompt_tokens_details: null };
    const object = chat ? 'chat.completion.chunk' : 'text_completion';
    const write = (payload: Json): void => {
      res.write(`data: ${JSON.stringify(payload)}\n\n`);
    };
    const logprobsOf = (from: number, to: number, offset: number): Json | null =>
      logprobs === null ? null : chat ? chatLogprobs(from, to, logprobs) : completionLogprobs(from, to, logprobs, offset);
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      if (chat) for (const c of choices) write({ id, object, created, model: served, choices: [{ index: c.index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    }
    const finals: Json[] = [];
    const handles: number[] = [];
    let left = choices.length;
    for (const c of choices) {
      const text = new ChoiceText(c.plan);
      let all = '';
      let offset = 0;
      const handle = engine.submit(c.prompt.tokens, c.plan.tokens, c.prompt.blocks, {
        onToken(index, finished) {
          const piece = text.piece(index);
          const fr = finished ? c.plan.finishReason : null;
          const sr = finished ? c.plan.stopReason : null;
          if (stream) {
            const lp = logprobsOf(index, index + 1, offset);
            if (chat) write({ id, object, created, model: served, choices: [{ index: c.index, delta: { content: piece }, logprobs: lp, finish_reason: fr, stop_reason: sr }] });
            else write({ id, object, created, model: served, choices: [{ index: c.index, text: piece, logprobs: lp, finish_reason: fr, stop_reason: sr }], usage: null });
          } else all += piece;
          offset += tokenText(index).length;
          if (!finished) return;
          finishReasons[c.plan.finishReason]++;
          const lp = logprobsOf(0, c.plan.tokens, 0);
          finals[c.index] = chat
            ? { index: c.index, message: { role: 'assistant', content: all, tool_calls: [] }, logprobs: lp, finish_reason: c.plan.finishReason, stop_reason: c.plan.stopReason }
            : { index: c.index, text: all, logprobs: lp, finish_reason: c.plan.finishReason, stop_reason: c.plan.stopReason, prompt_logprobs: null };
          if (--left > 0) return;
          if (stream) {
            if (includeUsage) write({ id, object, created, model: served, choices: [], usage });
            res.end('data: [DONE]\n\n');
          } else sendJson(res, 200, { id, object: chat ? 'chat.completion' : 'text_completion', created, model: served, choices: finals, usage });
        },
      });
      handles.push(handle);
    }
    openStreams.add(res);
    res.on('close', () => {
      openStreams.delete(res);
      // The client went away: its requests leave the engine, their KV blocks and batch slots freed.
      if (left > 0 && !crashed) for (const h of handles) engine.abort(h);
    });
  };

  /** vLLM's /tokenize: the token count and ids of a prompt or a conversation (the count generation reports), with max_model_len. */
  const tokenize = (res: ServerResponse, body: Json): void => {
    const chat = body['messages'] !== undefined;
    const raw = body['prompt'];
    const read = readPrompts(body, chat, resolved.block_size);
    if (typeof read === 'string' || !(chat || typeof raw === 'string' || (Array.isArray(raw) && raw.every((x) => typeof x === 'number')))) {
      sendError(res, 400, typeof read === 'string' ? read : '`prompt` must be a string or a list of token ids');
      return;
    }
    const tokens = chat ? tokenIds(messageText(body['messages'] as unknown[]), model.vocab_size) : typeof raw === 'string' ? tokenIds(raw, model.vocab_size) : (raw as number[]);
    sendJson(res, 200, { count: tokens.length, max_model_len: resolved.max_model_len, tokens, token_strs: null });
  };

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    await ready;
    if (crashed) {
      res.destroy();
      return;
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const method = req.method ?? 'GET';
    if ((method === 'GET' && path === '/health') || (path === '/ping' && (method === 'GET' || method === 'POST'))) {
      res.writeHead(200, { 'content-length': 0 });
      res.end();
      return;
    }
    if (opts.apiKey !== undefined && path.startsWith('/v1') && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      sendJson(res, 401, { error: 'Unauthorized' });
      return;
    }
    if (method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, {
        object: 'list',
        data: [{ id: served, object: 'model', created: createdS, owned_by: 'vllm', root: model.hf_name, parent: null, max_model_len: resolved.max_model_len, permission: [] }],
      });
      return;
    }
    if (method === 'GET' && path === '/version') {
      // The release imitated, as `vllm --version` prints it, when one was named.
      sendJson(res, 200, { version: opts.vllmVersion ?? 'lm-bench-sim' });
      return;
    }
    if (method === 'POST' && path === '/tokenize') {
      const body = await readJsonBody(req, res);
      if (body !== null) tokenize(res, body);
      return;
    }
    if (method === 'GET' && path === '/metrics') {
      const text = metricsText(engine, served, finishReasons);
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    if (method === 'POST' && (path === '/v1/completions' || path === '/v1/chat/completions')) {
      const body = await readJsonBody(req, res);
      if (body !== null) generate(req, res, body, path === '/v1/chat/completions');
      return;
    }
    // FastAPI's answers: a route that exists under another method is 405, naming the methods it takes.
    const allowed = ROUTE_METHODS[path];
    if (allowed !== undefined) {
      const text = JSON.stringify({ detail: 'Method Not Allowed' });
      res.writeHead(405, { 'content-type': 'application/json', allow: allowed.join(', '), 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    sendJson(res, 404, { detail: 'Not Found' });
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handler(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, err instanceof Error ? err.message : String(err), 'InternalServerError');
      else res.destroy();
    });
  };
  const server = opts.tls === undefined ? createServer(onRequest) : createTlsServer({ cert: opts.tls.cert, key: opts.tls.key }, onRequest);
  server.keepAliveTimeout = 5000; // uvicorn's default, as vLLM runs it
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((ok, fail) => {
    server.once('error', (err) => {
      engine.close();
      fail(listenError(err, host, opts.port ?? 8000));
    });
    server.listen(opts.port ?? 8000, host, () => {
      server.removeAllListeners('error');
      ok();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const phases = startupPhases(resolved, hw, model);
  const startupTimeS = phases.reduce((a, p) => a + p.seconds, 0);
  const scale = opts.startupScale ?? 0;
  let startupTimer: NodeJS.Timeout | undefined;
  const ready = new Promise<void>((done) => {
    if (scale <= 0) {
      done();
      return;
    }
    // The phases in order, each logged as vLLM logs it, in scaled real time.
    let i = 0;
    const nextPhase = (): void => {
      const p = phases[i++];
      if (p === undefined) {
        log('INFO: Application startup complete.');
        done();
        return;
      }
      startupTimer = setTimeout(() => {
        log(`INFO [startup] ${PHASE_LOG[p.phase]} took ${p.seconds.toFixed(2)} s (simulated)`);
        nextPhase();
      }, (p.seconds * scale * 1000) / speed);
    };
    nextPhase();
  });
  return {
    url: `${opts.tls === undefined ? 'http' : 'https'}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    engine,
    ready,
    startupTimeS,
    close: () =>
      new Promise<void>((ok) => {
        clearTimeout(startupTimer);
        engine.close();
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
