export * from './stats.js';
export * from './benchmark.js';
export * from './error-samples.js';
