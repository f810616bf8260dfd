/**
 * The surrogate: features (knobs through the space's encoder, workload, hardware, model, physics from
 * the simulator), XGBoost bootstrap ensembles per target with a typed-array tree evaluator, the
 * feasibility classifier, validation, and training/loading through the store.
 */
export { TARGET_NAMES, targetsOf, type TargetName, type TargetValues } from './targets.js';
export { buildFeatureRow, contextFeatures, encodeKnobs, featureNames, workloadStats, CONTEXT_FEATURES, MISSING_FEATURE, type FeatureContext, type FeatureRow, type KnobEncoder } from './features.js';
export { fitSurrogate, predictSurrogate, serializeSurrogate, deserializeSurrogate, DEFAULT_SURROGATE_SPEC, type Surrogate, type SurrogateSpec, type SurrogatePrediction, type TrainingRow } from './surrogate.js';
export { crossValidate, evaluateSurrogate, permutationImportance, scoreTarget, type FitFn, type TargetScore, type ValidationReport } from './validate.js';
export { datasetFromStore, datasetFromObservations, observationsFromStore, observationsFromTrials, type Dataset, type Observation } from './dataset.js';
export { trainFromStore, type TrainOptions, type TrainOutcome } from './train.js';
export {
  SURROGATE_KIND,
  heldOutOf,
  historyCounts,
  intervalScaleOf,
  loadSurrogate,
  loadSurrogateFor,
  saveSurrogate,
  selectSurrogate,
  studySlot,
  validationMetrics,
  type LoadedSurrogate,
  type SurrogateQuestion,
  type SurrogateScope,
} from './registry.js';
export { simulateHistory, withLoad, type SimHistoryCell } from './sim-history.js';
export { parseXgbModel, predictEnsemble, predictMargin, toFeatureMatrix, type FeatureMatrix, type TreeEnsemble } from './tree-eval.js';
export { trainBooster, loadBooster, Booster, DEFAULT_XGB_PARAMS, type XgbParams } from './xgb.js';
