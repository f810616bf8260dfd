import { z } from 'zod';
import { withOverrides, type ProfileParam, type SimProfile } from './sim-profile.js';

/**
 * Which vLLM the simulator imitates. The serving profile (data/sim-profile.yaml) was fitted end to end on
 * vLLM 0.10–0.12 rows, whose decode steps pay for their context more than the decode-attention kernel
 * alone takes (docs/calibration.md, "Decode at long contexts"). From vLLM 0.14 on, the earliest release
 * whose kernels aiconfigurator timed, a GPU's `sim_recent` overrides (data/hardware.yaml: its decode
 * attention at the rate those kernels read the KV cache) replace that part of the fit. A run that names
 * no version imitates a current vLLM, as the simulator's other defaults (async scheduling on) already do;
 * a profile the user fitted on their own runs already describes their vLLM and takes no overrides.
 */

/**
 * A vLLM release as `vllm --version` prints it: 0.15.1, 0.11.2, 0.10.2rc1 (the suffix is ignored); a
 * git tag's leading `v` (v0.15.1) is dropped, so one release is stated, cached and compared one way.
 */
export const VllmVersion = z
  .string()
  .regex(/^v?\d+\.\d+(\.\d+)?([.+-]?[A-Za-z0-9.+-]*)?$/, 'a vLLM release such as 0.15.1')
  .overwrite((v) => v.replace(/^v/, ''));
export type VllmVersion = z.infer<typeof VllmVersion>;

/** The first release priced by its kernels' measured KV read rate (aiconfigurator's tables start at 0.14.0). */
export const KERNEL_RATE_SINCE: readonly [number, number] = [0, 14];

/** [major, minor, patch] of a version string, or null when it is none. */
export function parseVllmVersion(v: string): [number, number, number] | null {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(v.trim());
  return m === null ? null : [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

/** Whether `v` is `major.minor` or later; an unreadable version is not. */
export function atLeastVersion(v: string, major: number, minor: number): boolean {
  const p = parseVllmVersion(v);
  return p !== null && (p[0] > major || (p[0] === major && p[1] >= minor));
}

/**
 * Whether a run of this vLLM decodes at its kernels' measured rate. No release, or one without a number
 * (`nightly`, `main`), is a current one.
 */
export function atKernelRate(vllmVersion: string | undefined): boolean {
  return vllmVersion === undefined || parseVllmVersion(vllmVersion) === null || atLeastVersion(vllmVersion, KERNEL_RATE_SINCE[0], KERNEL_RATE_SINCE[1]);
}

type Overrides = Partial<Record<ProfileParam, number | undefined>>;

/**
 * The catalog's profile for a GPU under `vllmVersion`: its `sim:` overrides, then `sim_recent` where the
 * release is recent (`hw`: the GPU's datasheet, or the overrides a calibration run just fitted for it).
 */
export function releaseProfile(profile: SimProfile, hw: { readonly sim?: Overrides | undefined; readonly sim_recent?: Overrides | undefined }, vllmVersion: string | undefined): SimProfile {
  const own = withOverrides(profile, hw.sim);
  if (!atKernelRate(vllmVersion)) return own;
  // The per-request step cost is the older releases' (the rows of 0.14 and later decode at their kernels' rate without it).
  return withOverrides({ ...own, request_step_us: 0 }, hw.sim_recent);
}
