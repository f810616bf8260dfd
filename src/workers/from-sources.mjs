// The first module of every worker thread while lm-bench runs from its TypeScript sources (tests,
// benches, a clone without a build; pool.ts `workerEntry`): it registers tsx in this thread, which a
// loader registered on the main thread does not reach and one on execArgv reaches too late for the
// entry, then loads the real `*.worker.ts` entry. A pool passes the entry as piscina's workerData, a
// long-lived worker as its last argv. Compiled (dist/), entries run directly and this file is unused.
import { workerData as poolData } from 'piscina';
import { register } from 'tsx/esm/api';

register();
const entry = poolData?.lmbEntry ?? process.argv.at(-1);
const mod = await import(entry);
export default mod.default;
