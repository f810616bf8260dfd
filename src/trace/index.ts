export * from './request.js';
export { parseTrace, limitTrace, detectReader, TRACE_READERS, MAX_BACKWARD_MS } from './parse.js';
export { readTraceFile, traceName, traceWorkloadOfFile, type TraceFileOptions } from './file.js';
export { traceWorkload, workloadNameOf, type TraceFit, type TraceSummary, type TraceWorkloadOptions } from './workload.js';
export { fitLength, fitArrival, fitSharedPrefix, clippedLognormalMean } from './fit.js';
export { azureTimeMs } from './azure.js';
export { MOONCAKE_BLOCK_TOKENS } from './jsonl.js';
