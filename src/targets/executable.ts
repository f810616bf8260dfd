import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { LmBenchError } from '../errors.js';

/** Where an executable is, or why it cannot be started. */
export type ExecutableLookup =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly why: 'missing' | 'not-executable'; readonly path: string | null };

/** An existing regular file this process may execute; 'missing' when there is nothing there. */
function probe(path: string): 'ok' | 'missing' | 'not-executable' {
  try {
    if (!statSync(path).isFile()) return 'not-executable';
  } catch {
    return 'missing';
  }
  try {
    accessSync(path, constants.X_OK);
    return 'ok';
  } catch {
    return 'not-executable';
  }
}

/**
 * Finds a launch command's executable the way spawn does: a name with a slash is a path (from the
 * working directory), a bare name is looked up on the PATH of the environment it will run in. A
 * missing vLLM otherwise starts nothing, exits 127 and fails every trial as if its configuration
 * were at fault, so the targets check before the first trial.
 */
export function findExecutable(name: string, env: Readonly<Record<string, string | undefined>>): ExecutableLookup {
  if (name.includes('/')) {
    const path = resolve(name);
    const found = probe(path);
    return found === 'ok' ? { ok: true, path } : { ok: false, why: found, path };
  }
  // As execvp: the first executable file on PATH wins; one found but not executable is reported when none is.
  let unusable: string | null = null;
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    const path = join(dir === '' ? '.' : dir, name);
    const found = probe(path);
    if (found === 'ok') return { ok: true, path: resolve(path) };
    if (found === 'not-executable') unusable ??= resolve(path);
  }
  return unusable === null ? { ok: false, why: 'missing', path: null } : { ok: false, why: 'not-executable', path: unusable };
}

/**
 * Throws when the vllm target's executable cannot be started: `flag` names where the name came from
 * (`--vllm-bin`), so the message says what to change. Returns the path found.
 */
export function assertVllmExecutable(name: string, env: Readonly<Record<string, string | undefined>>, flag = '--vllm-bin'): string {
  const found = findExecutable(name, env);
  if (found.ok) return found.path;
  const details = { field: flag.replace(/^-+/, ''), file: found.path ?? name };
  if (found.why === 'not-executable') {
    throw new LmBenchError('LMB_ERR_INVALID_ARGUMENT', `${flag} ${name}: ${found.path ?? name} is not an executable file (a directory, or no execute permission); give the vllm executable itself`, { details });
  }
  if (found.path !== null) {
    throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `${flag} ${name}: no such file${found.path === name ? '' : ` (${found.path})`}; give the path of the vllm executable (\`which vllm\` in its environment)`, { details });
  }
  const path = env['PATH'] ?? '';
  const shown = path.length > 300 ? `${path.slice(0, 300)}…` : path;
  throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `${flag} ${name}: no \`${name}\` on PATH (${shown === '' ? 'PATH is empty' : shown}); install vLLM there, activate its environment, or give its path with ${flag}`, { details });
}
