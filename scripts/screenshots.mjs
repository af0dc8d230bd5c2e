// `npm run screenshots`: the pictures of the results page in docs/img/, generated like the tables:
// the quickstart and an F10 failover run with their plots, and Debian's Chromium (driven by
// playwright-core) photographs their report.html. `--chromium <path>` for another browser binary.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const root = join(import.meta.dirname, '..');
const at = process.argv.indexOf('--chromium');
const executablePath = at > 0 ? process.argv[at + 1] : '/usr/bin/chromium';
const out = join(root, 'results', 'screenshots');
const img = join(root, 'docs', 'img');
mkdirSync(img, { recursive: true });

const RUNS = [
  { name: 'quickstart', scenario: 'examples/quickstart.yaml' },
  { name: 'f10-failover', scenario: 'examples/f10-failover.yaml' },
];

const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
try {
  for (const r of RUNS) {
    const dir = join(out, r.name);
    rmSync(dir, { recursive: true, force: true });
    execFileSync(
      process.execPath,
      [join(root, 'dist/orchestrator/cli.js'), 'run', r.scenario, '--out', dir, '-q'],
      {
        cwd: root,
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await page.goto(pathToFileURL(join(dir, 'report.html')).href);
    const file = join(img, `report-${r.name}.png`);
    // the top of the page: the overview, the fabric and the timeline
    await page.screenshot({ path: file, clip: { x: 0, y: 0, width: 1200, height: 1800 }, fullPage: true });
    await page.close();
    console.log(`screenshots: ${file}`);
  }
} finally {
  await browser.close();
}
