import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderStudyReport } from '../../src/report/study/index.js';
import { makeFixture } from '../report/study/fixture.js';

/**
 * The report as a reader sees it: headless Chromium opens report.html from disk with every non-file
 * request aborted, and every chart container must hold vega-embed's rendering, with no console error.
 * Debian's `chromium` package provides the browser (.ci/run installs it); without it the test skips.
 */
const CHROMIUM = '/usr/bin/chromium';

test('report.html renders every plot offline in headless Chromium', { timeout: 90_000 }, async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`${CHROMIUM} is not installed (apt-get install -y chromium); the browser test needs it`);
    return;
  }
  const { chromium } = await import('playwright-core');
  const fx = await makeFixture();
  t.after(() => fx.store.close());
  const report = await renderStudyReport(fx.store, 'fx', { generatedAt: '2026-01-01T00:00:00Z' });
  const dir = mkdtempSync(join(tmpdir(), 'lmb-report-browser-'));
  const file = join(dir, 'report.html');
  writeFileSync(file, report.html);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  t.after(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const blocked: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:')) return route.continue();
    blocked.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  // The page swallows embed failures (the static SVG stays readable), so record each vegaEmbed outcome.
  await page.addInitScript(`(() => {
    let wrapped;
    window.__lmb = { ok: [], failed: [] };
    Object.defineProperty(window, 'vegaEmbed', {
      configurable: true,
      get: () => wrapped,
      set: (f) => {
        wrapped = (el, spec, opts) => f(el, spec, opts).then(
          (r) => { window.__lmb.ok.push(el); return r; },
          (e) => { window.__lmb.failed.push(el + ': ' + String(e)); throw e; },
        );
      },
    });
  })()`);
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  const charts = await page.locator('div.chart').count();
  assert.equal(charts, Object.keys(report.svgs).length, 'one chart container per rendered plot');
  // vega-embed marks its container and replaces the static SVG with its own view. Page code is passed
  // as strings: the project compiles without the DOM library.
  await page.waitForFunction(`document.querySelectorAll('div.chart.vega-embed').length === ${charts}`, undefined, { timeout: 30_000 });
  const rendered = await page.evaluate<{ id: string; embed: boolean; views: number; marks: number }[]>(
    `[...document.querySelectorAll('div.chart')].map((e) => ({ id: e.id, embed: e.classList.contains('vega-embed'), views: e.querySelectorAll('svg.marks, canvas').length, marks: e.querySelectorAll('g.role-mark > path, g.role-mark > line').length }))`,
  );
  assert.equal(rendered.length, charts);
  await page.waitForFunction(`window.__lmb.ok.length + window.__lmb.failed.length === ${charts}`, undefined, { timeout: 30_000 });
  const outcomes = await page.evaluate<{ ok: string[]; failed: string[] }>('window.__lmb');
  assert.deepEqual(outcomes.failed, [], 'every vegaEmbed call succeeded');
  assert.equal(outcomes.ok.length, charts);
  for (const r of rendered) {
    assert.ok(r.embed && r.views >= 1, `${r.id} rendered by vega-embed`);
    assert.ok(r.marks > 0, `${r.id} has marks`);
  }
  // Hovering a measured point shows its full configuration (vega-embed's tooltip handler).
  await page.locator('g.measured_marks > path').first().hover();
  const tip = page.locator('#vg-tooltip-element');
  await tip.waitFor({ state: 'visible', timeout: 10_000 });
  const tipText = await tip.innerText();
  for (const knob of ['tensor_parallel_size', 'max_num_seqs', 'gpu_memory_utilization', 'kv_cache_dtype', 'enforce_eager']) assert.ok(tipText.includes(knob), `tooltip shows ${knob}`);
  assert.deepEqual(errors, [], 'no console errors');
  assert.deepEqual(blocked, [], 'the page asked for nothing off disk');
  const shot = join(dir, 'report.png');
  await page.screenshot({ path: shot, fullPage: true });
  assert.ok(statSync(shot).size > 10_000);
  t.diagnostic(`screenshot: ${shot}`);
});
