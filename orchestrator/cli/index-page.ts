/**
 * `index.html` of a folder of runs (a sweep, a chaos campaign, an experiment): its own tables (the
 * reproduction beside the paper's values, sweep.md, chaos.md), its plots, and every run under it with
 * its headline figures, linked to the run's report.html (or its folder, when the run drew no plots).
 * Like report.html it is one file with no script that opens from disk.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { formatNs } from '../../core/time.js';
import type { Summary } from '../engine/results.js';
import { esc, page, table } from '../page/html.js';
import { RUN_PAGE } from '../page/run-page.js';
import { type Reproduction, reproductionTable } from '../studies/reproduction.js';

export const INDEX_PAGE = 'index.html';

/** how deep runs are looked for under the folder (an experiment: seed-N/variant) */
const DEPTH = 3;

/** the run folders under `dir` (those with a summary.json), in path order */
function runsUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    for (const name of readdirSync(d).sort(byNumber)) {
      const p = join(d, name);
      if (!statSync(p).isDirectory() || name === 'logs' || name === 'plots' || name === 'capture') continue;
      if (existsSync(join(p, 'summary.json'))) out.push(p);
      else if (depth < DEPTH) walk(p, depth + 1);
    }
  };
  walk(dir, 1);
  return out;
}

/** seed-2 before seed-10 */
function byNumber(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

/** a Markdown pipe table (the tables sweep.md and chaos.md hold) as HTML; other lines as paragraphs */
export function markdownTables(md: string): string {
  const out: string[] = [];
  const lines = md.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (l.startsWith('|') && lines[i + 1]?.startsWith('| ---')) {
      const cells = (row: string) =>
        row
          .slice(1, row.endsWith('|') ? -1 : undefined)
          .split('|')
          .map((c) => esc(c.trim()));
      const head = cells(l);
      const rows: string[][] = [];
      i += 2;
      while (i < lines.length && lines[i].startsWith('|')) rows.push(cells(lines[i++]));
      i--;
      out.push(table(head, rows));
    } else if (l.startsWith('#')) out.push(`<h3>${esc(l.replace(/^#+\s*/, ''))}</h3>`);
    else if (l.trim() !== '') out.push(`<p>${esc(l)}</p>`);
  }
  return out.join('\n');
}

/** Writes `<dir>/index.html`; null when the folder holds no run and no table. */
export function writeIndexPage(dir: string, title = basename(dir)): string | null {
  const sections: Array<{ id: string; title: string; html: string }> = [];
  const rep = join(dir, 'reproduction.json');
  if (existsSync(rep)) {
    const r = JSON.parse(readFileSync(rep, 'utf8')) as Reproduction;
    sections.push({
      id: 'reproduction',
      title: `Reproduction: ${r.experiment}`,
      // the table reproduction.md holds, as the page's
      html: markdownTables(reproductionTable(r)),
    });
  }
  for (const [file, id, heading] of [
    ['sweep.md', 'sweep', 'Sweep'],
    ['chaos.md', 'chaos', 'Chaos'],
  ] as const) {
    const f = join(dir, file);
    if (existsSync(f)) sections.push({ id, title: heading, html: markdownTables(readFileSync(f, 'utf8')) });
  }
  const plotsDir = join(dir, 'plots');
  if (existsSync(plotsDir)) {
    const svgs = readdirSync(plotsDir)
      .filter((f) => f.endsWith('.svg'))
      .sort();
    if (svgs.length > 0)
      sections.push({
        id: 'plots',
        title: 'Plots',
        html: svgs
          .map((f) => `<div class="chart">${readFileSync(join(plotsDir, f), 'utf8')}</div>`)
          .join('\n'),
      });
  }
  const runs = runsUnder(dir);
  if (runs.length > 0) {
    const rows = runs.map((r) => {
      const s = JSON.parse(readFileSync(join(r, 'summary.json'), 'utf8')) as Summary;
      const rel = relative(dir, r);
      const href = existsSync(join(r, RUN_PAGE)) ? `${rel}/${RUN_PAGE}` : `${rel}/`;
      return [
        `<a href="${esc(href)}">${esc(rel)}</a>`,
        esc(s.scheme),
        `<span class="num">${s.flows.completed}/${s.flows.planned}</span>`,
        esc(formatNs(s.flows.fctP99Ns)),
        esc(String(s.flows.slowdownP99)),
        esc(`${(s.queues.maxBytes / 1000).toFixed(1)} KB`),
        esc(s.faults.map((f) => `${f.action} ${f.node ?? f.link?.join('–') ?? ''}`).join(', ') || '-'),
      ];
    });
    sections.push({
      id: 'runs',
      title: `Runs (${runs.length})`,
      html: table(
        ['run', 'scheme', 'flows completed', 'FCT p99', 'slowdown p99', 'largest queue', 'faults'],
        rows,
      ),
    });
  }
  if (sections.length === 0) return null;
  const file = join(dir, INDEX_PAGE);
  writeFileSync(file, page(`dcemu: ${title}`, esc(dir), sections));
  return file;
}
