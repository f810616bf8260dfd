// Worker entry: registers tsx in this worker thread, then loads the TypeScript study loop.
// (Worker threads do not inherit tsx's register() from the CLI's main thread.)
import { register } from 'tsx/esm/api';
register();
await import('./study-worker.ts');
