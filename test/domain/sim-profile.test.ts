import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Hardware, SimProfile } from '../../src/domain/index.js';
import { defaultCatalog } from '../../src/catalog/index.js';

const catalog = defaultCatalog();

test('a profile stored before kv_fp8_efficiency existed still reads, with the fit set’s 0.5; a GPU’s sim overrides never gain the default', () => {
  const { kv_fp8_efficiency: _dropped, ...old } = catalog.profile;
  assert.equal(SimProfile.parse(old).kv_fp8_efficiency, 0.5);
  const { sim: _sim, ...h100 } = catalog.gpu('H100-SXM');
  const parsed = Hardware.parse({ ...h100, sim: { eta_kv: 0.6 } });
  assert.deepEqual(parsed.sim, { eta_kv: 0.6 });
  assert.throws(() => Hardware.parse({ ...h100, sim: { kv_fp8_efficiency: 1.5 } }), 'an efficiency above 1 is refused');
});
