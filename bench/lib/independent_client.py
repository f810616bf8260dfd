#!/usr/bin/env python3
"""An independent load client for bench/real-server.ts: Python's http.client, a new connection per
request (as curl would), open-loop Poisson arrivals on threads. It runs the same procedure as
`lm-bench run --mode max-rate` (one run with every request at once for the saturated throughput, then
four bisection runs between 0 and it), written separately, so the two answers can be compared.

  python3 bench/lib/independent_client.py URL SLO_P95_TTFT_MS N_REQUESTS INPUT_WORDS OUTPUT_TOKENS SEED
Prints one JSON object: the probes and the answer.
"""
import http.client
import json
import random
import sys
import threading
import time
from urllib.parse import urlparse

url, slo_ms, n, in_words, out_tokens, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
u = urlparse(url)
WORDS = 'the of and to in is that for it as was with be by on not he this are or his from at which'.split()


def one(prompt, out):
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    try:
        body = json.dumps({'model': 'standin', 'prompt': prompt, 'max_tokens': out_tokens, 'stream': True, 'ignore_eos': True})
        conn.request('POST', u.path, body=body, headers={'Content-Type': 'application/json'})
        resp = conn.getresponse()
        first = None
        while True:
            line = resp.readline()
            if not line:
                break
            if line.startswith(b'data: ') and b'"text"' in line and first is None:
                first = time.perf_counter()
            if line.startswith(b'data: [DONE]'):
                break
        end = time.perf_counter()
        out.append({'ok': resp.status == 200 and first is not None, 'ttft_ms': None if first is None else (first - t0) * 1000, 'end': end})
    except Exception as e:  # a failure is a finding, not a crash
        out.append({'ok': False, 'ttft_ms': None, 'end': time.perf_counter(), 'error': str(e)})
    finally:
        conn.close()


def run(rate, k):
    rng = random.Random(seed * 1000 + k)
    prompts = [' '.join(rng.choice(WORDS) for _ in range(in_words)) for _ in range(n)]
    out, threads = [], []
    start = time.perf_counter()
    at = 0.0
    for p in prompts:
        if rate is not None:
            at += rng.expovariate(rate)
            wait = start + at - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
        t = threading.Thread(target=one, args=(p, out))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    ok = [r for r in out if r['ok']]
    ttfts = sorted(r['ttft_ms'] for r in ok)
    p95 = ttfts[min(len(ttfts) - 1, int(round(0.95 * (len(ttfts) - 1))))] if ttfts else None
    duration = max(r['end'] for r in out) - start
    return {'rate_rps': 'inf' if rate is None else rate, 'completed': len(ok), 'failed': n - len(ok), 'p95_ttft_ms': p95,
            'request_throughput': len(ok) / duration, 'meets_slo': len(ok) == n and p95 is not None and p95 <= slo_ms}


probes = [run(None, 0)]
best = probes[0]['request_throughput'] if probes[0]['meets_slo'] else None
lo, hi = 0.0, probes[0]['request_throughput']
if best is None:
    for k in range(1, 5):
        rate = (lo + hi) / 2
        p = run(rate, k)
        probes.append(p)
        if p['meets_slo']:
            lo, best = rate, rate
        else:
            hi = rate
print(json.dumps({'max_rate_rps': best if best is not None else 0.0, 'probes': probes}))
