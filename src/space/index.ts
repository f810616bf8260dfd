/**
 * The search space: the file schema and loader, the one encoder, enumeration, space-filling
 * sampling, feasibility by constraint rules (CEL plus the simulator's memory model) and pruning.
 */
export { loadSpace, SearchSpace, type PruneReport, type RuleInfo, type SpaceContext, type Verdict } from './space.js';
export { Encoder, type Column } from './encode.js';
export { contains, toExternal, toInternal, gridValues, type Knob, type NumericKnob, type CategoricalKnob, type BoolKnob, type GridValue } from './knob.js';
export { MEMORY_FUNCTIONS, MEMORY_READS, memoryFacts, memoryReads, type MemoryFacts, type MemoryFunctionName } from './memory.js';
export { latinHypercube } from './sample.js';
export { SpaceFile, KnobDef, RuleDef, RuleKind } from './schema.js';
export type { RuleRemoval } from './prune.js';
