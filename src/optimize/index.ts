/**
 * The optimizer, after Optuna: Pareto sorting and hypervolume, declared objectives with SLO
 * constraints, constrained EHVI with a believer step, samplers (random, grid, surrogate) behind one
 * interface, the study with ask/tell over the store, and the pure `recommend` core.
 */
export { dominates, nonDominatedSort, paretoFront, crowdingDistance, type Point } from './pareto.js';
export { hypervolume, hypervolume2d, hypervolume3d, hypervolumeMonteCarlo, hvImprovement2d, prepareFront2d } from './hypervolume.js';
export { DEFAULT_OBJECTIVES, sloConstraints, meetsConstraints, objectiveVector, objectiveTarget, goodputPerGpu, referencePoint, type Constraint } from './objectives.js';
export { constrainedEhvi, probabilityMeetsSlo, selectBatch, type CandidatePredictions, type BatchPick } from './acquisition.js';
export { configKey, type Sampler, type SamplerContext, type Proposal } from './sampler.js';
export { randomSampler, gridSampler, spaceFilling, type CandidateSource } from './samplers.js';
export { surrogateSampler, SURROGATE_SAMPLER_DEFAULTS, type SurrogateSamplerOptions } from './surrogate-sampler.js';
export { OptimizationStudy, createOptimizationStudy, valuesFromResult, type TellOutcome } from './study.js';
export { recommend, vllmConfigYaml, MIN_TRUSTED_RUNS, type RecommendInput, type Recommendation, type RecommendedConfig, type Interval } from './recommend.js';
export { spaceEncoder, spaceSource } from './space-source.js';
export { scoreCandidates, type ScoredCandidates } from './candidates.js';
