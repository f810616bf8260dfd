export * from './server-config.js';
export * from './slo.js';
export * from './workload.js';
export * from './hardware.js';
export * from './model-spec.js';
export * from './request-record.js';
export * from './benchmark-result.js';
export * from './trial.js';
