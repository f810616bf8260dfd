import assert from 'node:assert/strict';

/**
 * Minimal SVG checks for tests (no XML parser among the dependencies): tags balance, and the marks
 * of a named vega-lite layer (`<g class="… role-mark <name>_marks">`) can be listed.
 */
export function assertWellFormed(svg: string): void {
  assert.match(svg.trimStart(), /^<svg[\s>]/);
  assert.match(svg.trimEnd(), /<\/svg>$/);
  const stack: string[] = [];
  for (const m of svg.matchAll(/<(\/?)([a-zA-Z][\w:-]*)[^>]*?(\/?)>/g)) {
    const [, close, name, self] = m;
    if (self === '/') continue;
    if (close === '/') assert.equal(stack.pop(), name, `unbalanced </${name ?? ''}>`);
    else stack.push(name ?? '');
  }
  assert.deepEqual(stack, [], 'every tag is closed');
}

/** The graphic elements of a named mark (every group of that name: a line with a colour has one per series). */
export function marks(svg: string, name: string): string[] {
  const out: string[] = [];
  for (const g of svg.matchAll(new RegExp(`<g class="[^"]*role-mark ${name}_marks"[^>]*?(/?)>`, 'g'))) {
    if (g[1] === '/') continue; // an empty group
    const from = (g.index ?? 0) + g[0].length;
    const body = svg.slice(from, svg.indexOf('</g>', from));
    out.push(...[...body.matchAll(/<(path|line|text|rect)\b[^>]*>/g)].map((m) => m[0]));
  }
  return out;
}
