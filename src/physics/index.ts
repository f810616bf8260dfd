export * from './failure.js';
export * from './resolve.js';
export * from './validate.js';
export * from './memory.js';
export * from './startup.js';
export * from './step-time.js';
export * from './runtime-oom.js';
export * from './weights.js';
