/**
 * report.html in a real browser: Debian's Chromium (what .ci/run installs), driven by playwright-core
 * pointed at it. The quickstart's fabric (short) and an F10 failover run each write their page; it
 * opens from file:// with no console error and no request for anything but itself, every chart has
 * marks, the overview is the summary's own rows (summary.json read back through the same function the
 * terminal prints with), the elements the faults hit are marked, and the timeline lists every event.
 * Outside CI a machine without Chromium skips this file, saying so; in CI it runs.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { summaryRows } from '../orchestrator/engine/report.js';
import { CLI, dcemu, QUICKSTART_SHORT, ROOT, readJson, tempOut } from './helpers.js';

const CHROMIUM = process.env.DCEMU_CHROMIUM ?? '/usr/bin/chromium';
const HAVE = existsSync(CHROMIUM);
if (!HAVE && process.env.CI)
  throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium, which these tests need`);
if (!HAVE)
  console.warn(`test/page.browser.test.ts: skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

interface Opened {
  errors: string[];
  requests: string[];
  text: Record<string, string[][]>;
  marks: number[];
  hit: string[];
  hitLinks: number;
}

/** opens a page from disk and reads what a user would look at */
async function open(browser: Browser, file: string): Promise<Opened> {
  const page = await browser.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => requests.push(r.url()));
  const url = pathToFileURL(file).href;
  await page.goto(url, { waitUntil: 'load' });
  const rows = async (sel: string) => {
    const trs = await page.locator(`${sel} tbody tr`).all();
    return Promise.all(trs.map((tr) => tr.locator('td').allTextContents()));
  };
  const charts = await page.locator('.chart svg').all();
  const read = {
    text: { overview: await rows('#overview table'), events: await rows('#timeline table') },
    // each chart's marks: Vega draws them in groups of class mark-*; the topology its nodes and links
    marks: await Promise.all(
      charts.map((svg) =>
        svg.locator('[class^="mark-"] path, [class^="mark-"] line, g.node, line.link').count(),
      ),
    ),
    hit: await Promise.all(
      (await page.locator('svg.topology g.node.hit').all()).map(
        async (g) => (await g.getAttribute('data-node')) ?? '',
      ),
    ),
    hitLinks: await page.locator('svg.topology line.link.hit').count(),
  };
  await page.close();
  return { errors, requests: requests.filter((r) => r !== url), ...read };
}

describe.skipIf(!HAVE)('report.html in Chromium', () => {
  let browser: Browser;
  const parent = tempOut('page');
  const qs = join(parent, 'quickstart');
  const f10 = join(parent, 'f10');

  beforeAll(async () => {
    const [a, b] = await Promise.all([
      dcemu(
        [
          'run',
          'examples/quickstart.yaml',
          '--out',
          qs,
          '-q',
          ...QUICKSTART_SHORT,
          '--set',
          'run.plots=true',
        ],
        { plots: true },
      ),
      dcemu(['run', 'test/fixtures/f10-failover-short.yaml', '--out', f10, '-q'], { plots: true }),
    ]);
    expect(a.exitCode, a.stderr).toBe(0);
    expect(b.exitCode, b.stderr).toBe(0);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 200_000);

  afterAll(async () => {
    await browser?.close();
  });

  const check = async (dir: string) => {
    const s = readJson(join(dir, 'summary.json'));
    const p = await open(browser, join(dir, 'report.html'));
    expect(p.errors).toEqual([]);
    expect(p.requests).toEqual([]);
    // the topology, the timeline, the heatmap and the run's own plots: every one has marks
    expect(p.marks.length).toBeGreaterThanOrEqual(5);
    for (const m of p.marks) expect(m).toBeGreaterThan(0);
    // the overview is the summary's rows, as the terminal prints them
    expect(p.text.overview).toEqual(summaryRows(s, dir).map(([k, v]) => [k, v]));
    // every event of the run is on the timeline, in order
    const events = readFileSync(join(dir, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(p.text.events.map((r) => r[1])).toEqual(events.map((e: { kind: string }) => e.kind));
    return { s, p };
  };

  it('shows the quickstart: its summary, its fabric with the killed spine, its events, queues and CDFs', async () => {
    const { p } = await check(qs);
    expect(p.hit).toEqual(['spine0']);
    expect(p.hitLinks).toBe(0);
  });

  it('indexes a folder of runs: each run with its figures, linked to its page', async () => {
    const r = await dcemu(['report', parent]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(join(parent, 'index.html'));
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (q) => requests.push(q.url()));
    await page.goto(pathToFileURL(join(parent, 'index.html')).href);
    const links = await page
      .locator('#runs table a')
      .evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    expect(links).toEqual(['f10/report.html', 'quickstart/report.html']);
    const completed = await page.locator('#runs table tbody tr td:nth-child(3)').allTextContents();
    const done = (d: string) => {
      const s = readJson(join(d, 'summary.json'));
      return `${s.flows.completed}/${s.flows.planned}`;
    };
    expect(completed).toEqual([done(f10), done(qs)]);
    // a link opens the run's page
    await page.locator('#runs table a').first().click();
    expect(page.url()).toBe(pathToFileURL(join(f10, 'report.html')).href);
    expect(requests.filter((u) => !u.endsWith('.html'))).toEqual([]);
    await page.close();
  });

  it('live view: pauses a run at a virtual time, steps it, injects a link failure, and the run gives the bytes of one with that fault in its timeline', async () => {
    const live = join(parent, 'live');
    const ref = join(parent, 'ref');
    const short = QUICKSTART_SHORT.filter((a) => !a.startsWith('timeline.') && a !== '--set').flatMap((a) => [
      '--set',
      a,
    ]);
    const run = execa(
      process.execPath,
      [
        CLI,
        'run',
        'examples/quickstart.yaml',
        '--out',
        live,
        '-q',
        '--no-plots',
        ...short,
        '--set',
        'timeline=[{at: 1500us, action: kill, node: spine0}]',
        '--ui',
        '--pause-at',
        '1ms',
      ],
      {
        cwd: ROOT,
        reject: false,
        timeout: 180_000,
        env: { FORCE_COLOR: '0' },
      },
    );
    // a failed check must not leave the held run behind: Ctrl-C stops it and its nodes
    onTestFinished(async () => {
      if (run.exitCode === null) run.kill('SIGINT');
      await run;
    });
    let err = '';
    const url = await new Promise<string>((resolve, reject) => {
      run.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /live view: (http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]+\/)/.exec(err);
        if (m) resolve(m[1]);
      });
      run.once('exit', () => reject(new Error(`the run ended before its live view: ${err}`)));
    });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    const heldAt = (ns: number) => page.waitForSelector(`#status[data-held="${ns}"]`, { timeout: 60_000 });
    await heldAt(1_000_000);
    await page.fill('#to', '1.2ms');
    await page.click('#step');
    await heldAt(1_200_000);
    await page.selectOption('#action', 'link-down');
    await page.fill('#a', 'leaf0');
    await page.fill('#b', 'spine1');
    await page.click('#inject');
    // a step past it: the failure fires and the page's timeline shows it
    await page.fill('#to', '1.3ms');
    await page.click('#step');
    await heldAt(1_300_000);
    await page.waitForSelector('#events tr:has-text("link-down")', { timeout: 10_000 });
    // the switches' queues as their last snapshot had them: port names, or the line that none queued
    const queued = await page.locator('#queues tr td:first-child').allTextContents();
    expect(queued.length).toBeGreaterThan(0);
    for (const q of queued)
      expect(q).toMatch(/^(leaf|spine)\d+:\d+→(h|leaf|spine)\d+$|^no queue holds a byte$/);
    expect(await page.textContent('#error')).toBe('');
    await page.click('#resume');
    const done = await run;
    expect(done.exitCode, err).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
    // the same run with the failure in its timeline from the start, never paused
    const r = await dcemu([
      'run',
      'examples/quickstart.yaml',
      '--out',
      ref,
      '-q',
      ...short,
      '--set',
      'timeline=[{at: 1200us, action: link-down, link: [leaf0, spine1]}, {at: 1500us, action: kill, node: spine0}]',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const f of ['flows.csv', 'queues.csv', 'events.jsonl', 'outcomes.csv'])
      expect(readFileSync(join(live, f), 'utf8'), f).toBe(readFileSync(join(ref, f), 'utf8'));
    // and the live run's scenario.json holds the injected entry: the run replays from its files
    const timeline = readJson(join(live, 'scenario.json')).timeline;
    expect(timeline.map((e: { action: string; at: number }) => [e.action, e.at])).toEqual([
      ['kill', 1_500_000],
      ['link-down', 1_200_000],
    ]);
  });

  it('shows an F10 failover: the killed switch and the failed link marked on the fabric', async () => {
    const { s, p } = await check(f10);
    expect(s.faults.map((f: { action: string }) => f.action)).toEqual(['kill', 'link-down']);
    expect(p.hit).toEqual(['agg2']);
    expect(p.hitLinks).toBe(1);
  });
});
