// piscina entry: registers tsx in this worker thread, then loads the TypeScript handler.
// (Worker threads do not inherit tsx's register() from the CLI's main thread.)
import { register } from 'tsx/esm/api';
register();
const mod = await import('./plan-worker.ts');
export default mod.default;
