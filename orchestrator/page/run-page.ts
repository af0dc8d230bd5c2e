/**
 * `report.html`: one run's results folder as one page that opens from disk. Everything on it comes
 * from the folder's own files (so `dcemu report <results>` writes it again from them): the summary's
 * rows as the terminal prints them (the scheme's own rows from its definition, so an outside scheme
 * gets its section), the fabric drawn with the elements faults hit, a timeline of faults, detections
 * and the nodes' events, a per-port queue heatmap, the FCT and slowdown CDFs by size class and the
 * clock error (the run's own plots, inlined), the PTP tree, the fidelity panel, and links to the
 * files. Charts are SVG drawn here by Vega: the page holds no script and fetches nothing (its
 * Content-Security-Policy forbids it). Long series are thinned as the PNG plots are.
 */
import { createReadStream, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import type { TopLevelSpec } from 'vega-lite';
import { formatNs } from '../../core/time.js';
import type { Topology } from '../../topology/types.js';
import { codeLabel } from '../engine/build-info.js';
import { summaryRows } from '../engine/report.js';
import type { Summary } from '../engine/results.js';
import { svgOf } from '../plots/index.js';
import { frame } from '../plots/style.js';
import { timeUnit } from '../plots/thin.js';
import { esc, page, table } from './html.js';
import { faultMarks, topologySvg } from './topology.js';

/** ports drawn in the heatmap (the busiest by their largest queue) and time bins across the run */
export const HEATMAP_PORTS = 24;
export const HEATMAP_BINS = 120;
/** events listed in the timeline's table (all of them are in events.jsonl) */
export const TIMELINE_ROWS = 300;

/** the file the page is written to, in a results folder */
export const RUN_PAGE = 'report.html';

export interface PageOutcome {
  file: string | null;
  problems: string[];
}

/** A run's page into `<dir>/report.html`, from the folder's files; a part that cannot be drawn is left out and said. */
export async function writeRunPage(dir: string): Promise<PageOutcome> {
  const problems: string[] = [];
  const summaryFile = join(dir, 'summary.json');
  if (!existsSync(summaryFile))
    return { file: null, problems: [`${dir}: no summary.json: not a run's results folder`] };
  const s = JSON.parse(readFileSync(summaryFile, 'utf8')) as Summary;
  const part = async (what: string, f: () => Promise<string> | string): Promise<string> => {
    try {
      return await f();
    } catch (err) {
      problems.push(`report.html: ${what} not drawn: ${err instanceof Error ? err.message : String(err)}`);
      return `<p class="muted">${esc(what)} could not be drawn.</p>`;
    }
  };
  const events = readEvents(join(dir, 'events.jsonl'));
  const sections = [
    { id: 'overview', title: 'Overview', html: overview(s, dir) },
    { id: 'topology', title: 'Topology', html: await part('the topology', () => topology(dir, s)) },
    { id: 'timeline', title: 'Timeline', html: await part('the timeline', () => timeline(events, s)) },
    { id: 'queues', title: 'Queues', html: await part('the queue heatmap', () => queues(dir, s)) },
    { id: 'flows', title: 'Flows', html: flows(dir, s) },
    { id: 'clocks', title: 'Clocks', html: clocks(dir, s) },
    { id: 'fidelity', title: 'Fidelity', html: fidelity(s) },
    { id: 'files', title: 'Files', html: files(dir) },
  ];
  const flowsLine = `${s.flows.completed}/${s.flows.planned} flows completed`;
  // results from before summaries recorded their code have none
  const code = (s as Partial<Summary>).code;
  const label = code && codeLabel(code);
  const codeLine = label ? `; code of ${label}` : '';
  const sub = esc(
    `${s.scheme} on ${s.runtime}, ${s.sync === 'dilated' ? `dilated (tdf ${s.tdf})` : 'conservative (exact)'}; ${formatNs(s.virtualNs)} of virtual time in ${(s.wallMs / 1000).toFixed(1)} s; ${flowsLine}; run ${s.runId}${codeLine}`,
  );
  const file = join(dir, RUN_PAGE);
  writeFileSync(file, page(`dcemu run: ${s.scenario}`, sub, sections));
  return { file, problems };
}

function overview(s: Summary, dir: string): string {
  const rows = summaryRows(s, dir).map(([k, v]) => [esc(k), esc(v)]);
  return table(['', ''], rows, 'summary');
}

async function topology(dir: string, s: Summary): Promise<string> {
  const file = join(dir, 'topology.json');
  if (!existsSync(file)) return '<p class="muted">No topology.json in this folder.</p>';
  const topo = JSON.parse(readFileSync(file, 'utf8')) as Topology;
  const svg = await topologySvg(topo, faultMarks(s.faults));
  const roles = [...new Set(topo.nodes.map((n) => n.role))];
  const legend = `<p class="legend">${roles.map((r) => `<span><i class="${r}" style="background:${r === 'host' ? '#dbe9f6' : r === 'switch' ? '#fde6c4' : '#e3d7f0'}"></i>${esc(r)}</span>`).join('')}<span><i style="border:3px solid #c62828"></i>hit by a fault (hover for what and when)</span></p>`;
  const hit = s.faults.map((f) => `${f.action} ${f.node ?? f.link?.join('–') ?? ''} at ${formatNs(f.t)}`);
  return `${legend}<div class="chart">${svg}</div>${hit.length > 0 ? `<p>Faults: ${esc(hit.join('; '))}.</p>` : '<p class="muted">No fault hit this run.</p>'}`;
}

interface RunEvent {
  t: number;
  kind: string;
  node?: string;
  [k: string]: unknown;
}

function readEvents(file: string): RunEvent[] {
  if (!existsSync(file)) return [];
  const out: RunEvent[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const e = JSON.parse(line) as RunEvent;
      if (typeof e.t === 'number' && typeof e.kind === 'string') out.push(e);
    } catch {
      // a torn last line of an interrupted run: the rest is still shown
    }
  }
  return out;
}

/** what an event says beyond its time, kind and node */
function details(e: RunEvent): string {
  return Object.entries(e)
    .filter(([k]) => k !== 't' && k !== 'kind' && k !== 'node')
    .map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(', ');
}

async function timeline(events: RunEvent[], s: Summary): Promise<string> {
  if (events.length === 0) return '<p class="muted">No events recorded.</p>';
  const span = Math.max(s.virtualNs, ...events.map((e) => e.t), 1);
  // PTP's warm-up happens before traffic starts: its events have negative times
  const from = Math.min(0, ...events.map((e) => e.t));
  const { div, label } = timeUnit(span);
  const spec = {
    ...frame(
      `Events over the run (${events.length})`,
      760,
      Math.max(80, 26 * new Set(events.map((e) => e.kind)).size),
    ),
    data: { values: events.map((e) => ({ t: e.t / div, kind: e.kind, node: e.node ?? '' })) },
    mark: { type: 'point', filled: true, size: 60 },
    encoding: {
      x: {
        field: 't',
        type: 'quantitative',
        title: `virtual time (${label}, from the start of traffic)`,
        scale: { domain: [from / div, span / div] },
      },
      y: { field: 'kind', type: 'nominal', title: null },
      color: { field: 'kind', type: 'nominal', legend: null },
    },
  } as TopLevelSpec;
  const rows = events
    .slice(0, TIMELINE_ROWS)
    .map((e) => [
      `<span class="num">${esc(formatNs(e.t))}</span>`,
      esc(e.kind),
      esc(e.node ?? ''),
      esc(details(e)),
    ]);
  const more =
    events.length > TIMELINE_ROWS
      ? `<p class="muted">The first ${TIMELINE_ROWS} of ${events.length} events; all are in events.jsonl.</p>`
      : '';
  return `<div class="chart">${await svgOf(spec)}</div>${table(['time', 'event', 'node', 'details'], rows, 'events')}${more}`;
}

async function queues(dir: string, s: Summary): Promise<string> {
  const file = join(dir, 'queues.csv');
  if (!existsSync(file)) return '<p class="muted">No queues.csv in this folder.</p>';
  // per port: its largest queue in each time bin, and its largest overall
  const span = Math.max(s.virtualNs, 1);
  const bins = new Map<string, Float64Array>();
  const peak = new Map<string, number>();
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  let header = true;
  for await (const line of lines) {
    if (header) {
      header = false;
      continue;
    }
    const [node, port, peer, t, bytes] = line.split(',');
    const b = Number(bytes);
    if (!(b > 0)) continue;
    const key = `${node}:${port}→${peer}`;
    let a = bins.get(key);
    if (a === undefined) {
      a = new Float64Array(HEATMAP_BINS);
      bins.set(key, a);
    }
    const i = Math.min(HEATMAP_BINS - 1, Math.max(0, Math.floor((Number(t) / span) * HEATMAP_BINS)));
    if (b > a[i]) a[i] = b;
    if (b > (peak.get(key) ?? 0)) peak.set(key, b);
  }
  if (bins.size === 0) return '<p class="muted">No queue built anywhere in this run.</p>';
  const ports = [...peak.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, HEATMAP_PORTS);
  const { div, label } = timeUnit(span);
  const w = span / HEATMAP_BINS / div;
  const values = ports.flatMap(([key]) =>
    Array.from(bins.get(key)!, (v, i) => ({
      port: key,
      t0: (i * span) / HEATMAP_BINS / div,
      t1: (i * span) / HEATMAP_BINS / div + w,
      kb: v / 1000,
    })).filter((x) => x.kb > 0),
  );
  const spec = {
    ...frame(
      `Egress queues over time: the ${ports.length} busiest of ${bins.size} ports that queued`,
      760,
      Math.max(120, 18 * ports.length),
    ),
    data: { values },
    mark: { type: 'rect' },
    encoding: {
      x: {
        field: 't0',
        type: 'quantitative',
        title: `virtual time (${label})`,
        scale: { domain: [0, span / div] },
      },
      x2: { field: 't1' },
      y: { field: 'port', type: 'nominal', title: null, sort: ports.map(([k]) => k) },
      color: {
        field: 'kb',
        type: 'quantitative',
        title: 'largest queue in the bin (KB)',
        scale: { scheme: 'orangered' },
      },
    },
  } as TopLevelSpec;
  const q = s.queues;
  const line = `Queue p50 ${(q.p50Bytes / 1000).toFixed(1)} KB, p99 ${(q.p99Bytes / 1000).toFixed(1)} KB, max ${(q.maxBytes / 1000).toFixed(1)} KB (every switch egress, sampled).`;
  return `<p>${esc(line)}</p><div class="chart">${await svgOf(spec)}</div>`;
}

/** one of the run's own plots, inlined, if it was drawn */
function plot(dir: string, name: string): string {
  const f = join(dir, 'plots', `${name}.svg`);
  return existsSync(f) ? `<div class="chart">${readFileSync(f, 'utf8')}</div>` : '';
}

function flows(dir: string, s: Summary): string {
  const f = s.flows;
  const rows = Object.entries(f.bySize ?? {}).map(([size, x]) => [
    esc(size),
    `<span class="num">${x.completed}/${x.flows}</span>`,
    esc(formatNs(x.p50Ns)),
    esc(formatNs(x.p99Ns)),
    esc(String(x.p99Slowdown)),
  ]);
  const head = `<p>${f.completed} of ${f.planned} flows completed, ${f.failed} failed, ${f.unfinished} unfinished; FCT p50 ${esc(formatNs(f.fctP50Ns))}, p99 ${esc(formatNs(f.fctP99Ns))}; slowdown p50 ${f.slowdownP50}, p99 ${f.slowdownP99}.</p>`;
  const bySize =
    rows.length > 0 ? table(['size (frames)', 'completed', 'FCT p50', 'FCT p99', 'slowdown p99'], rows) : '';
  const charts = plot(dir, 'fct-cdf') + plot(dir, 'slowdown-cdf') + plot(dir, 'faults');
  return head + bySize + (charts || '<p class="muted">No flow completed: no CDF.</p>');
}

function clocks(dir: string, s: Summary): string {
  const c = s.clocks;
  if (!c)
    return '<p class="muted">Ideal clocks: every node on the same virtual time (no oscillators, no PTP).</p>';
  const rows = c.nodes.map((n) => [
    esc(n.node),
    esc(n.master ?? '-'),
    `<span class="num">${n.stepsRemoved ?? '-'}</span>`,
    esc(n.lockedAt === null ? 'never' : formatNs(n.lockedAt)),
    esc(formatNs(n.errP50Ns)),
    esc(formatNs(n.errP99Ns)),
    esc(formatNs(n.errMaxNs)),
  ]);
  const head = `<p>${esc(c.timestamping === 'none' ? 'Free-running oscillators, no PTP' : `PTP, ${c.timestamping} stamps, ${c.delayMechanism ?? 'e2e'}, switches ${c.switchClocks ?? 'none'}; grandmaster ${c.grandmaster ?? 'none'}; ${c.lockedNodes}/${c.slaves} slaves locked`)}.</p>`;
  return (
    head +
    plot(dir, 'clock-error') +
    table(
      ['node', 'master (at the end)', 'stepsRemoved', 'locked at', '|error| p50', 'p99', 'max'],
      rows,
      'clocks',
    )
  );
}

function fidelity(s: Summary): string {
  const f = s.fidelity;
  const verdict =
    s.sync === 'conservative'
      ? '<p class="good">Conservative time: every frame handled at its virtual time; the run gives the same bytes on any machine.</p>'
      : f.ok
        ? '<p class="good">Dilated time within its threshold.</p>'
        : '<p class="bad">Dilated time missed its threshold: the figures are not faithful (rerun with a larger tdf or conservative time).</p>';
  const rows = [
    ['late p50 / p99', `${formatNs(f.lateP50Ns)} / ${formatNs(f.lateP99Ns)}`],
    ['frames handled', String(f.framesHandled)],
    ['causality misses', String(f.causalityMisses)],
    ['miss rate', String(f.missRate)],
  ].map(([k, v]) => [esc(k), esc(v)]);
  return verdict + table(['', ''], rows);
}

function files(dir: string): string {
  const list: string[] = [];
  const walk = (d: string, depth: number) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) {
        if (depth < 1 && name !== 'logs') walk(p, depth + 1);
        continue;
      }
      if (name === RUN_PAGE || name.endsWith('.vl.json') || name.endsWith('.svg')) continue;
      list.push(relative(dir, p));
    }
  };
  walk(dir, 0);
  return `<ul class="files">${list.map((f) => `<li><a href="${esc(f)}">${esc(f)}</a></li>`).join('')}</ul><p class="muted">Node logs are in logs/.</p>`;
}
