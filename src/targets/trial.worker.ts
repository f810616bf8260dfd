import { defaultCatalog, registerGpu, registerModel } from '../catalog/index.js';
import { costedOutcome } from './costed.js';
import { createTarget } from './factory.js';
import { TargetSpec } from './spec.js';
import { TrialInput, type TrialOutcome } from './types.js';
import { workerHandler } from '../workers/pool.js';

/** Worker entry: one trial on one target slot. Plain data in (validated here), plain data out. */
export interface TrialTask {
  readonly spec: unknown;
  readonly slot: number;
  readonly input: unknown;
}

async function runTrialTask(task: TrialTask): Promise<TrialOutcome> {
  const spec = TargetSpec.parse(task.spec);
  const input = TrialInput.parse(task.input);
  // A worker thread has its own catalog: the model a config.json defined, and the GPU a datasheet
  // defined, travel with the trial.
  if (input.model_spec !== undefined) registerModel(input.model_spec);
  if (input.hardware_spec !== undefined) registerGpu(input.hardware_spec);
  return costedOutcome(await createTarget(spec, task.slot).runTrial(input), defaultCatalog());
}

export default workerHandler(runTrialTask);
