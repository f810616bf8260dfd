/** A growable ring buffer: O(1) push/pop at both ends (the V1 waiting queue gets preempted requests at its front). */
export class Deque<T> {
  private buf: (T | undefined)[] = new Array<T | undefined>(16);
  private head = 0;
  private len = 0;

  get size(): number {
    return this.len;
  }

  peekFront(): T | undefined {
    return this.len === 0 ? undefined : this.buf[this.head];
  }

  at(i: number): T | undefined {
    return i < 0 || i >= this.len ? undefined : this.buf[(this.head + i) % this.buf.length];
  }

  pushBack(x: T): void {
    if (this.len === this.buf.length) this.grow();
    this.buf[(this.head + this.len) % this.buf.length] = x;
    this.len++;
  }

  pushFront(x: T): void {
    if (this.len === this.buf.length) this.grow();
    this.head = (this.head - 1 + this.buf.length) % this.buf.length;
    this.buf[this.head] = x;
    this.len++;
  }

  popFront(): T | undefined {
    if (this.len === 0) return undefined;
    const x = this.buf[this.head];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) % this.buf.length;
    this.len--;
    return x;
  }

  private grow(): void {
    const next = new Array<T | undefined>(this.buf.length * 2);
    for (let i = 0; i < this.len; i++) next[i] = this.buf[(this.head + i) % this.buf.length];
    this.buf = next;
    this.head = 0;
  }
}

/**
 * A binary min-heap of (time, value), for requests in the API front end. Equal times leave in the order
 * they were pushed: a burst of same-length prompts reaches the engine in the order it was sent, as
 * vLLM's FCFS queue sees it (an unstable heap served a burst's last requests first).
 */
export class TimeHeap<T> {
  private readonly times: number[] = [];
  private readonly seqs: number[] = [];
  private readonly values: T[] = [];
  private nextSeq = 0;

  get size(): number {
    return this.times.length;
  }

  peekTime(): number {
    return this.times.length === 0 ? Number.POSITIVE_INFINITY : (this.times[0] as number);
  }

  /** Whether entry a leaves before (time, seq). */
  private before(a: number, time: number, seq: number): boolean {
    const ta = this.times[a] as number;
    return ta < time || (ta === time && (this.seqs[a] as number) < seq);
  }

  private move(from: number, to: number): void {
    this.times[to] = this.times[from] as number;
    this.seqs[to] = this.seqs[from] as number;
    this.values[to] = this.values[from] as T;
  }

  push(time: number, value: T): void {
    const seq = this.nextSeq++;
    let i = this.times.length;
    this.times.push(time);
    this.seqs.push(seq);
    this.values.push(value);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.before(p, time, seq)) break;
      this.move(p, i);
      i = p;
    }
    this.times[i] = time;
    this.seqs[i] = seq;
    this.values[i] = value;
  }

  pop(): T | undefined {
    const t = this.times;
    if (t.length === 0) return undefined;
    const top = this.values[0];
    const lastT = t.pop() as number;
    const lastS = this.seqs.pop() as number;
    const lastV = this.values.pop() as T;
    const n = t.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && this.before(r, t[l] as number, this.seqs[l] as number) ? r : l;
        if (!this.before(c, lastT, lastS)) break;
        this.move(c, i);
        i = c;
      }
      t[i] = lastT;
      this.seqs[i] = lastS;
      this.values[i] = lastV;
    }
    return top;
  }
}
