// Piscina entry: registers tsx in this worker thread, then loads the TypeScript handler.
import { register } from 'tsx/esm/api';
register();
const mod = await import('./sim-batch.worker.ts');
export default mod.default;
