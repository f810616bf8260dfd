import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chartSection, escapeHtml, htmlPage } from '../../src/report/html.js';
import { renderSvg, type VlSpec } from '../../src/report/render.js';

const spec: VlSpec = {
  data: { values: [{ x: 1, y: 2, s: 'a' }, { x: 4, y: 3, s: 'a' }, { x: 16, y: 5, s: 'b' }] },
  mark: { type: 'line', point: true },
  encoding: { x: { field: 'x', type: 'quantitative' }, y: { field: 'y', type: 'quantitative', title: 'tokens/s' }, color: { field: 's', type: 'nominal' } },
};

test('a Vega-Lite spec renders to SVG in Node without a canvas', async () => {
  const svg = await renderSvg(spec);
  assert.match(svg, /^<svg[^>]+xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(svg, /tokens\/s/);
  assert.match(svg, /<path/);
});

test('the page is self-contained: libraries inlined, nothing fetched from the network', async () => {
  const page = htmlPage({
    title: 'A <report> & more',
    sections: [
      { kind: 'text', title: 'Intro', text: 'first <b>para</b>\n\nsecond' },
      { kind: 'table', columns: ['name', 'value'], rows: [['x<y', 1.23456], ['none', null], ['int', 42]] },
      await chartSection('Chart', spec),
    ],
  });
  assert.match(page, /<title>A &lt;report&gt; &amp; more<\/title>/);
  assert.match(page, /<p>first &lt;b&gt;para&lt;\/b&gt;<\/p>/);
  assert.match(page, /<td>x&lt;y<\/td><td class="num">1\.235<\/td>/);
  assert.match(page, /<div class="chart" id="chart-2"><svg/);
  assert.match(page, /vegaEmbed\('#'\+c\.id/);
  // No external resource of any kind: no src/href to a URL, no <link>, no CDN host names.
  assert.doesNotMatch(page, /<script[^>]+src=/i);
  assert.doesNotMatch(page, /<link[^>]+href=/i);
  assert.doesNotMatch(page, /cdn\.jsdelivr|unpkg\.com/);
  // The inlined bundles must not close the script element early.
  const scripts = page.match(/<script>/g)?.length ?? 0;
  assert.equal(scripts, (page.match(/<\/script>/g) ?? []).length);
  assert.equal(scripts, 4);
});

test('without interaction the page has only the SVGs', async () => {
  const page = htmlPage({ title: 't', sections: [await chartSection('c', spec)], interactive: false });
  assert.doesNotMatch(page, /<script/);
  assert.ok(page.length < 100_000);
  assert.equal(escapeHtml(`"'`), '&quot;&#39;');
});
