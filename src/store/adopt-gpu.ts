import { datasheetToCarry, gpuFigures } from '../catalog/gpu-file.js';
import { registerGpu, type Catalog } from '../catalog/index.js';
import type { Hardware, Study, StudySpec } from '../domain/index.js';
import { LmBenchError } from '../errors.js';

/**
 * GPUs the catalog lacks (a `--gpu` datasheet file, a datasheet sent to the service) ride in the
 * study's spec (`StudySpec.hardware_spec`; no table of their own): the study keeps the datasheet it
 * began with, and every process that opens the history can price the GPU its runs name.
 */

/** What these read of the history: its studies. Not `Store`, which would import the store class that calls them (a cycle). */
type StudyHistory = { listStudies(): Study[] };

/** A study's hardware fields for a resolved GPU: the id and count, and the datasheet when the catalog lacks it. */
export function studyGpuFields(hw: Hardware, count: number, catalog: Catalog): Pick<StudySpec, 'hardware' | 'hardware_spec'> {
  const carried = datasheetToCarry(hw, catalog);
  return { hardware: { gpu: hw.id, count }, ...(carried === undefined ? {} : { hardware_spec: carried }) };
}

/** Registers the datasheet a study (or a trial, a task) carries, over any this process had under its id. */
export function registerStudyGpu(spec: { readonly hardware_spec?: Hardware | undefined }): void {
  if (spec.hardware_spec !== undefined) registerGpu(spec.hardware_spec);
}

/** The datasheets the stored studies carry, oldest study first. */
export function storedGpus(store: StudyHistory): { study: string; spec: Hardware }[] {
  return store.listStudies().flatMap((s) => (s.spec.hardware_spec === undefined ? [] : [{ study: s.spec.name, spec: s.spec.hardware_spec }]));
}

/**
 * Every stored study's datasheet, registered so the catalog's lookups (training, `recommend`, the
 * report, the service) find the GPU its runs name; one this process registered first is kept.
 */
export function registerStoredGpus(store: StudyHistory): void {
  for (const g of storedGpus(store)) registerGpu(g.spec, 'keep');
}

/**
 * Refuses a datasheet whose id the history already files other figures under (a study began with
 * them): runs, surrogates and learned rules are keyed by the GPU's id, so two GPUs would share one
 * history, and a resumed study could be priced on the other. The same figures from another path are fine.
 */
export function assertGpuFitsHistory(store: StudyHistory, hw: Hardware | undefined): void {
  if (hw === undefined) return;
  const figures = gpuFigures(hw);
  const clash = storedGpus(store).find((g) => g.spec.id === hw.id && gpuFigures(g.spec) !== figures);
  if (clash === undefined) return;
  throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `GPU id "${hw.id}" is filed in this history with other datasheet figures (study "${clash.study}"); give this datasheet an id of its own`, {
    details: { field: 'gpu', value: hw.id, study: clash.study },
  });
}
