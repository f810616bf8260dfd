import type { PromptBlocks } from '../workload/sample.js';

/**
 * The KV block pool of one replica with V1's prefix cache (vLLM's `vllm/v1/core/block_pool.py`,
 * `kv_cache_manager.py`), kept as counts and hashes rather than physical block ids:
 * - a request holds `cachedKeys` (full blocks registered in the cache, ref-counted, shareable)
 *   plus `privateBlocks` (its partial block, and full blocks whose hash another request owns);
 * - a cached block whose ref count drops to 0 stays hashed in an LRU free queue and is reused on a
 *   hit or evicted (oldest first) when a new block is needed;
 * - only full blocks are cached; a hit covers at most ⌊(num_tokens − 1)/block_size⌋ blocks.
 * Simplification: new blocks come from never-hashed free blocks before evicting cached ones
 * (vLLM pops its single free queue in order), which keeps cached blocks slightly longer.
 *
 * Block identity: the blocks wholly inside a shared prefix are keyed by (group, index) and are the
 * same for every request of the group; every later block is unique to its request (its hash chain
 * includes its own tokens), keyed by (request, index), which still lets a preempted request reuse
 * its own blocks when it is recomputed.
 */
export interface KvRequest {
  /** Dense request index (unique within a run). */
  readonly idx: number;
  readonly prefixGroup: number | null;
  readonly prefixTokens: number;
  /** A trace request's prompt blocks: equal ids, equal content (`PromptBlocks`); null otherwise. */
  readonly blocks: PromptBlocks | null;
  /** Prompt tokens, shared prefix included: only blocks wholly inside the prompt can be shared. */
  readonly promptTokens: number;
  cachedKeys: number[];
  privateBlocks: number;
  /** Blocks [0, hashedBlocks) have been looked at for caching. */
  hashedBlocks: number;
  /** Blocks held in the sliding-window groups (never cached here). */
  slidingBlocks: number;
}

/**
 * Sliding-window layers (gpt-oss) under vLLM's hybrid KV cache manager: they form `groups` block
 * groups beside the full-attention one, drawing from the same pool; a request holds at most
 * `maxBlocks` blocks in each (its window plus the block being filled).
 */
export interface SlidingGroups {
  readonly groups: number;
  readonly maxBlocks: number;
}

const INDEX_SPACE = 1 << 17; // blocks per request key space (131072 × 16-token blocks ≫ any max_model_len)
/**
 * Keys of trace blocks: −(TRACE_KEYS + id × TRACE_SUB + k) for the k-th cache block inside trace block
 * `id`, below every group key (−(1 + group × INDEX_SPACE + block) stays above −2^40 for any group count
 * a workload can name). TRACE_SUB bounds the cache blocks one trace block spans (512 tokens / 8 = 64).
 */
const TRACE_KEYS = 2 ** 40;
const TRACE_SUB = 1 << 12;

/**
 * Hashed blocks with ref count 0, oldest first. A queue with lazy deletion (a block taken back by a hit
 * leaves a stale entry that eviction skips) instead of a Map iterated from its head: V8 leaves deleted
 * Map entries in place until it rehashes, so "the oldest key" of a Map evicted from the front costs a
 * scan over every hole, which made long prompts on a cached pool quadratic.
 */
class LruQueue {
  private readonly seqOf = new Map<number, number>();
  private keys: number[] = [];
  private seqs: number[] = [];
  private head = 0;
  private nextSeq = 0;

  get size(): number {
    return this.seqOf.size;
  }

  push(key: number): void {
    const seq = this.nextSeq++;
    this.seqOf.set(key, seq);
    this.keys.push(key);
    this.seqs.push(seq);
  }

  delete(key: number): void {
    this.seqOf.delete(key);
  }

  /** Removes and returns the oldest live key (the queue is never empty when called). */
  popOldest(): number {
    for (;;) {
      const key = this.keys[this.head] as number;
      const seq = this.seqs[this.head] as number;
      this.head++;
      if (this.seqOf.get(key) === seq) {
        this.seqOf.delete(key);
        if (this.head > 1024 && this.head * 2 > this.keys.length) this.compact();
        return key;
      }
    }
  }

  private compact(): void {
    this.keys = this.keys.slice(this.head);
    this.seqs = this.seqs.slice(this.head);
    this.head = 0;
  }
}

export class KvCache {
  readonly numBlocks: number;
  readonly blockSize: number;
  readonly caching: boolean;
  private freeUncached: number;
  /** Every hashed block → its ref count. */
  private readonly refs = new Map<number, number>();
  /** Hashed blocks with ref count 0, oldest first. */
  private readonly lru = new LruQueue();
  queriedTokens = 0;
  hitTokens = 0;
  peakUsedBlocks = 0;
  /** The most blocks in use since `beginStep` (a step's fullest, before it frees anything). */
  stepPeakBlocks = 0;

  private readonly sliding: SlidingGroups | null;

  constructor(numBlocks: number, blockSize: number, caching: boolean, sliding: SlidingGroups | null = null) {
    this.numBlocks = numBlocks;
    this.blockSize = blockSize;
    this.caching = caching;
    this.freeUncached = numBlocks;
    this.sliding = sliding;
  }

  /** More sliding-window blocks a request needs to hold `totalTokens`. */
  private slidingNeed(req: KvRequest, totalTokens: number): number {
    const s = this.sliding;
    if (s === null) return 0;
    return s.groups * Math.min(Math.ceil(totalTokens / this.blockSize), s.maxBlocks) - req.slidingBlocks;
  }

  get freeBlocks(): number {
    return this.freeUncached + this.lru.size;
  }

  get usedBlocks(): number {
    return this.numBlocks - this.freeBlocks;
  }

  /** vLLM's `kv_cache_usage_perc`. */
  get usage(): number {
    return this.numBlocks === 0 ? 0 : this.usedBlocks / this.numBlocks;
  }

  private key(req: KvRequest, block: number): number {
    const tb = req.blocks;
    if (tb !== null && (block + 1) * this.blockSize <= req.promptTokens) {
      // The trace block this cache block starts in: its id names the content up to there.
      const start = block * this.blockSize;
      const j = Math.floor(start / tb.tokens);
      const id = tb.ids[j];
      if (id !== undefined) return -(TRACE_KEYS + id * TRACE_SUB + Math.floor((start - j * tb.tokens) / this.blockSize));
    }
    if (req.prefixGroup !== null && (block + 1) * this.blockSize <= req.prefixTokens) {
      return -(1 + req.prefixGroup * INDEX_SPACE + block);
    }
    return req.idx * INDEX_SPACE + block;
  }

  /**
   * Admission: the longest cached prefix (full blocks, at most numTokens − 1 tokens) and blocks for
   * `newTokens` more. Returns the hit in tokens, or −1 (nothing changed) when blocks run out.
   *
   * An admitted request's lookup counts in `queriedTokens`/`hitTokens` (vLLM's `PrefixCacheStats`)
   * unless it is `resumed` after a preemption: vLLM records those in separate `preempted_*` counters
   * that `vllm:prefix_cache_queries`/`_hits` do not export, so a victim re-finding its own blocks
   * does not raise the hit rate. A lookup whose allocation fails is not counted (the request is looked
   * up again when it is admitted; counting each try was vLLM issue #43736).
   */
  admit(req: KvRequest, numTokens: number, newTokensMax: (hitTokens: number) => number, resumed = false): number {
    let hitBlocks = 0;
    let hitFree = 0;
    if (this.caching) {
      const maxHit = Math.floor((numTokens - 1) / this.blockSize);
      while (hitBlocks < maxHit) {
        const ref = this.refs.get(this.key(req, hitBlocks));
        if (ref === undefined) break;
        if (ref === 0) hitFree++;
        hitBlocks++;
      }
    }
    const hit = hitBlocks * this.blockSize;
    const n = newTokensMax(hit);
    if (n < 0) return -1;
    const need = Math.ceil((hit + n) / this.blockSize) - hitBlocks;
    const slide = Math.max(0, this.slidingNeed(req, hit + n));
    if (need + slide > this.freeBlocks - hitFree) return -1;
    for (let b = 0; b < hitBlocks; b++) {
      const k = this.key(req, b);
      const ref = this.refs.get(k) as number;
      if (ref === 0) this.lru.delete(k);
      this.refs.set(k, ref + 1);
      req.cachedKeys.push(k);
    }
    req.hashedBlocks = hitBlocks;
    this.take(need + slide);
    req.privateBlocks += need;
    req.slidingBlocks += slide;
    if (this.caching && !resumed) {
      this.queriedTokens += numTokens;
      this.hitTokens += hit;
    }
    return hit;
  }

  /** Blocks `grow(req, totalTokens)` would take. */
  growthNeed(req: KvRequest, totalTokens: number): number {
    return Math.max(0, Math.ceil(totalTokens / this.blockSize) - req.cachedKeys.length - req.privateBlocks) + Math.max(0, this.slidingNeed(req, totalTokens));
  }

  /** Grow a running request to hold `totalTokens`; false (nothing changed) when blocks run out. */
  grow(req: KvRequest, totalTokens: number): boolean {
    const need = Math.max(0, Math.ceil(totalTokens / this.blockSize) - req.cachedKeys.length - req.privateBlocks);
    const slide = Math.max(0, this.slidingNeed(req, totalTokens));
    if (need + slide === 0) return true;
    if (need + slide > this.freeBlocks) return false;
    this.take(need + slide);
    req.privateBlocks += need;
    req.slidingBlocks += slide;
    return true;
  }

  /** Register the request's full blocks up to `computedTokens` in the cache (vLLM does it when it schedules them). */
  commit(req: KvRequest, computedTokens: number): void {
    if (!this.caching) return;
    const full = Math.floor(computedTokens / this.blockSize);
    for (let b = req.hashedBlocks; b < full; b++) {
      const k = this.key(req, b);
      if (!this.refs.has(k) && req.privateBlocks > 0) {
        this.refs.set(k, 1);
        req.cachedKeys.push(k);
        req.privateBlocks--;
      }
    }
    if (full > req.hashedBlocks) req.hashedBlocks = full;
  }

  /** Finished or preempted: blocks back to the pool; hashed ones stay reusable (tail evicted first). */
  free(req: KvRequest): void {
    const keys = req.cachedKeys;
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i] as number;
      const ref = (this.refs.get(k) as number) - 1;
      this.refs.set(k, ref);
      if (ref === 0) this.lru.push(k);
    }
    keys.length = 0;
    this.freeUncached += req.privateBlocks + req.slidingBlocks;
    req.privateBlocks = 0;
    req.slidingBlocks = 0;
    req.hashedBlocks = 0;
  }

  /** A step starts: its peak starts from the blocks in use now. */
  beginStep(): void {
    this.stepPeakBlocks = this.usedBlocks;
  }

  private take(n: number): void {
    const fromFree = Math.min(n, this.freeUncached);
    this.freeUncached -= fromFree;
    for (let i = fromFree; i < n; i++) this.refs.delete(this.lru.popOldest());
    const used = this.usedBlocks;
    if (used > this.peakUsedBlocks) this.peakUsedBlocks = used;
    if (used > this.stepPeakBlocks) this.stepPeakBlocks = used;
  }
}
