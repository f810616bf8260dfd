export * from './stats.js';
export * from './benchmark.js';
