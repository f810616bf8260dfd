import { MemoryStore } from '../../src/store/index.js';
import { storeContract } from './store.contract.js';

storeContract('MemoryStore', (options) => ({ store: new MemoryStore(options), dispose: () => undefined }));
