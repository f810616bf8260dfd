/**
 * An incremental Server-Sent Events parser that survives any split of the byte stream: bytes are
 * decoded incrementally as UTF-8 (a multi-byte character cut in two is held back), lines are
 * reassembled across reads, and an event is emitted only at its blank line (WHATWG SSE framing:
 * `\n`, `\r\n` or `\r` line ends, `:` comments, `data:` with one optional space stripped, several
 * `data:` lines joined by `\n`, a leading byte-order mark dropped). Fields other than `data` (`event:`,
 * `id:`, `retry:`) are ignored.
 */
export interface SseParser {
  /** Feeds bytes; calls `onData` once for every complete event that carried data. */
  push(bytes: Uint8Array): void;
  /** End of stream: flushes a final event that lacked its blank line (lenient, like vLLM's client). */
  end(): void;
}

/**
 * Bytes at the end of `b` that begin a UTF-8 character not yet complete (0–3): they wait for the
 * next read. Cheaper than a TextDecoder per stream, and a stream of ASCII never holds anything back.
 */
function incompleteTail(b: Uint8Array): number {
  const n = b.length;
  for (let k = 1; k <= Math.min(3, n); k++) {
    const c = b[n - k] as number;
    if ((c & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return need > k ? k : 0;
  }
  return 0;
}

export function createSseParser(onData: (data: string) => void): SseParser {
  let held: Buffer | null = null;
  let buf = '';
  let data: string[] = [];
  let sawCr = false;
  // The stream's first bytes not yet seen: a byte-order mark there is dropped, as the SSE standard's
  // decoder does; kept, it would turn the first line's field into "\uFEFFdata" and lose the first token.
  let atStart = true;

  const dispatch = (): void => {
    if (data.length === 0) return;
    const joined = data.length === 1 ? (data[0] as string) : data.join('\n');
    data = [];
    onData(joined);
  };

  const line = (text: string): void => {
    if (text.length === 0) {
      dispatch();
      return;
    }
    if (text.charCodeAt(0) === 58 /* : */) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    if (field !== 'data') return;
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    data.push(value);
  };

  const feed = (raw: string): void => {
    const text = atStart && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
    if (raw.length > 0) atStart = false;
    let s = buf.length === 0 ? text : buf + text;
    buf = '';
    let start = 0;
    if (sawCr && s.charCodeAt(0) === 10) start = 1; // "\r" ended the last read, "\n" begins this one
    sawCr = false;
    if (s.indexOf('\r', start) < 0) {
      // No CR (what vLLM sends): lines end at "\n" only, found by the native search.
      for (let nl = s.indexOf('\n', start); nl >= 0; nl = s.indexOf('\n', start)) {
        line(s.slice(start, nl));
        start = nl + 1;
      }
      buf = s.slice(start);
      return;
    }
    for (let i = start; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      line(s.slice(start, i));
      if (c === 13) {
        if (i + 1 === s.length) sawCr = true;
        else if (s.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    buf = s.slice(start);
    s = '';
  };

  return {
    push(bytes) {
      let b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      if (held !== null) {
        b = Buffer.concat([held, b]);
        held = null;
      }
      const cut = incompleteTail(b);
      if (cut > 0) {
        held = Buffer.from(b.subarray(b.length - cut));
        b = b.subarray(0, b.length - cut);
      }
      if (b.length > 0) feed(b.toString('utf8'));
    },
    end() {
      if (held !== null) {
        feed(held.toString('utf8')); // a truncated character decodes to U+FFFD, as TextDecoder would
        held = null;
      }
      if (buf.length > 0) {
        line(buf);
        buf = '';
      }
      dispatch();
    },
  };
}
