import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/**
 * Vega-Lite → SVG in Node, headless: vega's View with `renderer: 'none'` renders to an SVG string
 * without a canvas or a DOM, so plots are made at build time and need no network or browser.
 */
export type VlSpec = TopLevelSpec;

export async function renderSvg(spec: VlSpec): Promise<string> {
  const vg = compile(spec).spec;
  const view = new vega.View(vega.parse(vg), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
