import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { defaultCatalog } from '../../src/catalog/index.js';
import { Workload } from '../../src/domain/index.js';
import { simulateHistory } from '../../src/surrogate/sim-history.js';
import { openStore } from '../../src/store/index.js';
import { createRng } from '../../src/util/rng.js';

/** A store `dir/h.db` with `runs` simulated runs of llama-3.1-8b on one H100, max_num_seqs varied (the surrogate commands' tests). */
export function seededDb(dir: string, runs: number): string {
  const path = join(dir, 'h.db');
  const store = openStore(path, { now: () => 1 });
  const configs = Array.from({ length: runs }, (_, i) => ({ max_num_seqs: 8 * (i + 1) }));
  const workload = Workload.parse({ name: 'w', input_len: { dist: 'fixed', value: 256 }, output_len: { dist: 'fixed', value: 64 }, arrival: { kind: 'closed', concurrency: 32 }, num_prompts: 64 });
  for (const o of simulateHistory([{ hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, configs }], defaultCatalog(), createRng(3))) {
    if (o.result === null) continue;
    const contentHash = createHash('sha256').update(JSON.stringify(o.config)).digest('hex');
    store.storeRuns([{ result: o.result, serverConfig: o.config, hardware: o.hardware, model: o.model, workload: o.workload, sourceFormat: 'lm_bench', sourcePath: null, contentHash }]);
  }
  store.close();
  return path;
}
