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

/** A binary min-heap of (time, value), for requests in the API front end. */
export class TimeHeap<T> {
  private readonly times: number[] = [];
  private readonly values: T[] = [];

  get size(): number {
    return this.times.length;
  }

  peekTime(): number {
    return this.times.length === 0 ? Number.POSITIVE_INFINITY : (this.times[0] as number);
  }

  push(time: number, value: T): void {
    const t = this.times;
    const v = this.values;
    let i = t.length;
    t.push(time);
    v.push(value);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((t[p] as number) <= time) break;
      t[i] = t[p] as number;
      v[i] = v[p] as T;
      i = p;
    }
    t[i] = time;
    v[i] = value;
  }

  pop(): T | undefined {
    const t = this.times;
    const v = this.values;
    if (t.length === 0) return undefined;
    const top = v[0];
    const lastT = t.pop() as number;
    const lastV = v.pop() as T;
    const n = t.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && (t[r] as number) < (t[l] as number) ? r : l;
        if ((t[c] as number) >= lastT) break;
        t[i] = t[c] as number;
        v[i] = v[c] as T;
        i = c;
      }
      t[i] = lastT;
      v[i] = lastV;
    }
    return top;
  }
}
