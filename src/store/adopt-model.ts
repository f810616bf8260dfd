import { registerModel, type Catalog } from '../catalog/index.js';
import type { ResolvedModel } from '../catalog/resolve-model.js';
import type { StudySpec } from '../domain/index.js';
import { adoptedIdentity, HASH_SUFFIX_CHARS, type Store } from './store.js';

/**
 * The edge's second step after `resolveModel`: the history's identity for the model. A spec derived
 * from a config.json is stored (store.ts `adoptModelSpec`: a second checkpoint of one name gets
 * `ID@HASH8`) and registered with the catalog, so everything downstream looks it up by the id it
 * returns. A derived id that names a catalog row (a directory called `qwen2.5-7b`) is suffixed the same
 * way: the catalog's row would otherwise answer every later lookup of it.
 */
export function adoptResolvedModel(store: Store, resolved: ResolvedModel, catalog: Catalog): ResolvedModel {
  const spec = withoutCatalogClash(resolved, catalog);
  const adopted = store.adoptModelSpec({ ...resolved, spec });
  registerModel(adopted, resolved.config_hash);
  return { ...resolved, spec: adopted };
}

/**
 * What `adoptResolvedModel` would answer, without writing: for reads (`recommend`, `GET /v1/runs?model=`)
 * that must find the history of this checkpoint but leave the database as it was. Registered too.
 */
export function identifyResolvedModel(store: Store, resolved: ResolvedModel, catalog: Catalog): ResolvedModel {
  const hash = resolved.config_hash;
  const spec = withoutCatalogClash(resolved, catalog);
  if (hash === null) return { ...resolved, spec };
  const all = store.listModelSpecs();
  const { id, stored } = adoptedIdentity((k) => all.find((m) => m.id === k) ?? null, { ...resolved, spec, config_hash: hash });
  const out = stored?.spec ?? { ...spec, id };
  registerModel(out, hash);
  return { ...resolved, spec: out };
}

function withoutCatalogClash(resolved: ResolvedModel, catalog: Catalog): ResolvedModel['spec'] {
  const { spec, config_hash: hash } = resolved;
  if (hash === null || catalog.findOwn(spec.id) === null) return spec;
  return { ...spec, id: `${spec.id}@${hash.slice(0, HASH_SUFFIX_CHARS)}` };
}

/** A study's model fields for an adopted model: the id, and the spec and its hash when it is not a catalog row. */
export function studyModelFields(adopted: ResolvedModel): Pick<StudySpec, 'model' | 'model_spec' | 'model_config_hash'> {
  if (adopted.config_hash === null) return { model: adopted.spec.id };
  return { model: adopted.spec.id, model_spec: adopted.spec, model_config_hash: adopted.config_hash };
}
