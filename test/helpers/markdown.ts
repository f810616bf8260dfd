import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { headingAnchor } from '../../scripts/gen-cli-doc.js';

/** The text with fenced code blocks blanked out (a `# comment` in a shell block is no heading). */
export function withoutFences(text: string): string {
  return text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');
}

/** The anchors GitHub gives the headings of a Markdown text (a repeated one gets -1, -2, …). */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of withoutFences(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const base = headingAnchor(m[1] ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1] ?? '');
  return out;
}

/** Targets of inline links `[text](target)` outside code (link text may hold inline code). */
export function linksOf(text: string): string[] {
  const prose = withoutFences(text).replace(/`[^`\n]*`/g, 'code');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '');
}

/**
 * Links of the Markdown file at `file` (absolute) that lead nowhere: a relative path that does not
 * exist, or an anchor that is not a heading of the Markdown file it points into.
 */
export function brokenLinks(file: string, root: string): string[] {
  const text = readFileSync(file, 'utf8');
  const broken: string[] = [];
  for (const link of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
    const [path = '', anchor] = link.split('#');
    const target = path === '' ? file : join(dirname(file), decodeURIComponent(path));
    const where = `${relative(root, file)}: ${link}`;
    if (!existsSync(target)) {
      broken.push(`${where} (no such file)`);
      continue;
    }
    if (anchor !== undefined && anchor !== '' && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) {
      broken.push(`${where} (no such heading)`);
    }
  }
  return broken;
}
