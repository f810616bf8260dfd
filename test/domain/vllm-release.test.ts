import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Hardware, VllmVersion, atKernelRate, atLeastVersion, parseVllmVersion, releaseProfile, type SimProfile } from '../../src/domain/index.js';
import { defaultCatalog } from '../../src/catalog/index.js';

const catalog = defaultCatalog();

test('vLLM releases read as vllm --version prints them, and compare by major and minor', () => {
  assert.deepEqual(parseVllmVersion('0.15.1'), [0, 15, 1]);
  assert.deepEqual(parseVllmVersion('v0.10.2rc1'), [0, 10, 2]);
  assert.deepEqual(parseVllmVersion('0.9'), [0, 9, 0]);
  assert.equal(parseVllmVersion('latest'), null);
  assert.ok(atLeastVersion('0.14.0', 0, 14) && atLeastVersion('1.0', 0, 14) && !atLeastVersion('0.13.9', 0, 14));
  assert.equal(atLeastVersion('nightly', 0, 14), false);
  assert.ok(VllmVersion.safeParse('0.15.1').success);
  assert.ok(!VllmVersion.safeParse('fifteen').success);
  assert.ok(!VllmVersion.safeParse('0.15; rm -rf /').success);
  // A git tag's `v` is dropped: one release, one spelling (answers, cache keys, study specs).
  assert.equal(VllmVersion.parse('v0.12.0'), '0.12.0');
  assert.equal(VllmVersion.parse('0.10.2rc1'), '0.10.2rc1');
});

test('from vLLM 0.14, and for a run that names no release, the GPU’s sim_recent overrides apply on top of its sim ones', () => {
  assert.equal(atKernelRate(undefined), true);
  assert.equal(atKernelRate('0.14.0'), true);
  assert.equal(atKernelRate('0.12.0'), false);
  const base: SimProfile = { ...catalog.profile, eta_kv: 0.7, kv_fp8_efficiency: 0.5 };
  const hw = { sim: { eta_kv: 0.6 }, sim_recent: { eta_kv: 0.9, kv_fp8_efficiency: 0.8 } };
  assert.equal(releaseProfile(base, hw, '0.11.1').eta_kv, 0.6);
  assert.equal(releaseProfile(base, hw, '0.11.1').kv_fp8_efficiency, 0.5);
  assert.equal(releaseProfile(base, hw, '0.15.1').eta_kv, 0.9);
  assert.equal(releaseProfile(base, hw, undefined).kv_fp8_efficiency, 0.8);
  // A GPU without sim_recent (no kernel data: the MI300X) reads its KV cache alike for every release; only
  // the older releases' per-request step cost (below) tells them apart.
  assert.deepEqual(releaseProfile(base, { sim: { eta_kv: 0.45 } }, '0.15.1'), { ...releaseProfile(base, { sim: { eta_kv: 0.45 } }, '0.10.2'), request_step_us: 0 });
});

test('the catalog prices each GPU for the release asked: the H100 reads its KV cache faster on a current vLLM than the fit set’s did', () => {
  const h100 = catalog.gpu('H100-SXM');
  assert.equal(catalog.profileFor(h100, '0.12.0').eta_kv, catalog.profile.eta_kv, 'the fit set’s releases: the profile as fitted');
  assert.ok(catalog.profileFor(h100).eta_kv > catalog.profile.eta_kv);
  assert.deepEqual(catalog.profileFor(h100), catalog.profileFor(h100, '0.15.1'));
  assert.equal(catalog.profileFor(catalog.gpu('MI300X')).eta_kv, catalog.profileFor(catalog.gpu('MI300X'), '0.10.2').eta_kv);
  assert.throws(() => Hardware.parse({ ...h100, sim_recent: { eta_kv: 1.5 } }), /eta_kv/);
});

test('the per-request step cost is the older releases’: from vLLM 0.14 none is charged unless a GPU’s sim_recent sets one', () => {
  const base: SimProfile = { ...catalog.profile, request_step_us: 16 };
  const hw = { sim: { eta_kv: 0.6 }, sim_recent: { eta_kv: 0.9 } };
  assert.equal(releaseProfile(base, hw, '0.11.1').request_step_us, 16);
  assert.equal(releaseProfile(base, hw, '0.15.1').request_step_us, 0);
  assert.equal(releaseProfile(base, hw, undefined).request_step_us, 0);
  assert.equal(releaseProfile(base, { sim_recent: { request_step_us: 5 } }, '0.15.1').request_step_us, 5);
  // The shipped profile charges one, for the fit set's releases only.
  const h100 = catalog.gpu('H100-SXM');
  assert.ok(catalog.profileFor(h100, '0.12.0').request_step_us > 0);
  assert.equal(catalog.profileFor(h100).request_step_us, 0);
});
