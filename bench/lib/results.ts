import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { PROJECT_ROOT } from '../../src/catalog/index.js';

/** Replaces one marked section of bench/results/<file>, so several benchmarks can share one file. */
export function writeSection(fileName: string, name: string, body: string, title: string): void {
  const file = `${PROJECT_ROOT}/bench/results/${fileName}`;
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  let text = existsSync(file) ? readFileSync(file, 'utf8') : `# ${title}\n\n`;
  const block = `${start}\n${body}\n${end}`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  text = i >= 0 && j > i ? text.slice(0, i) + block + text.slice(j + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, text);
}
