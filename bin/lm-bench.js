#!/usr/bin/env node
// Launcher. A built lm-bench runs the compiled JavaScript in dist/ (`npm run build`, which `npm install`
// runs through `prepare`): start-up without compiling TypeScript on the fly. A checkout whose sources
// changed after the build, or LMB_FROM_SOURCE=1, runs the sources through tsx instead, so an edit is
// never run stale and a developer never has to remember to rebuild.
import { existsSync, readdirSync, statSync } from 'node:fs';

const built = new URL('../dist/cli/main.js', import.meta.url);
const sources = new URL('../src/', import.meta.url);

/** The newest modification time under a folder (a few ms for the ~400 files of src/). */
function newestMs(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = new URL(e.isDirectory() ? `${e.name}/` : e.name, dir);
    newest = Math.max(newest, e.isDirectory() ? newestMs(p) : statSync(p).mtimeMs);
  }
  return newest;
}

function fromSources() {
  if (process.env.LMB_FROM_SOURCE === '1' || !existsSync(built)) return true;
  return existsSync(sources) && newestMs(sources) > statSync(built).mtimeMs;
}

/** tsx, or null where it is not installed (a production install: `npm install --omit=dev`). */
async function loadTsx() {
  try {
    return await import('tsx/esm/api');
  } catch {
    return null;
  }
}

const tsx = fromSources() ? await loadTsx() : null;
if (tsx !== null) {
  tsx.register();
  await import('../src/cli/main.ts');
} else if (existsSync(built) && process.env.LMB_FROM_SOURCE !== '1') {
  // Sources newer than the build but no tsx to run them (tsx is a dev dependency): the build still
  // runs; refusing to start would turn a touched file into an outage.
  if (fromSources()) console.error('lm-bench: warning: src/ changed after the build in dist/ and tsx is not installed to run it; running the build (`npm run build` to refresh it)');
  await import('../dist/cli/main.js');
} else {
  console.error(`lm-bench: error LMB_ERR_INTERNAL: ${existsSync(built) ? 'LMB_FROM_SOURCE=1 but' : 'no build in dist/ and'} no tsx to run the sources: run \`npm install\` (or \`npm run build\`)`);
  process.exit(70);
}
