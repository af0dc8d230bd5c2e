/**
 * The results folder's files (docs/results.md; collect.ts computes what they hold): summary.json,
 * scenario.json and topology.json, flows.csv, outcomes.csv, senders.csv, queues.csv, nodes.json,
 * events.jsonl, the scheme's own files, the run log's line, and the plots and page last.
 */
import { writeFileSync } from 'node:fs';
import { Histogram } from '../../core/histogram.js';
import { writeRunPlots } from '../plots/index.js';
import { schemeDefinition } from '../registry/index.js';
import { writeClockFiles } from './clocks.js';
import type { FabricResult } from './fabric-result.js';
import { bytesBySource } from './fairness.js';
import type { FlowNotDone } from './outcomes.js';
import type { FlowRow, Summary } from './results.js';
import { appendRunLog } from './run-log.js';

const csvCell = (v: unknown) => (Array.isArray(v) ? v.join(';') : String(v));

/** A CSV field, quoted when it holds a quote, a comma or a newline. */
export const csvField = (v: string): string => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/**
 * Writes the results folder, the plots last (unless `run.plots` is false), and the run's line in the
 * run log (DCEMU_RUN_LOG); returns the problems of both (a plot that could not be drawn, a log that
 * could not be written) as lines for the caller to show: the figures do not depend on them.
 */
export async function writeResults(
  out: string,
  r: FabricResult,
  summary: Summary,
  flows: FlowRow[],
  outcomes: FlowNotDone[] = [],
): Promise<string[]> {
  const topo = r.scenario.topology;
  const name = (id: number) => topo.nodes[id]?.name ?? String(id);
  writeFileSync(`${out}/summary.json`, `${JSON.stringify(summary, null, 2)}\n`);
  const { topology, ...scenarioRest } = r.scenario;
  writeFileSync(`${out}/scenario.json`, `${JSON.stringify(scenarioRest, null, 2)}\n`);
  writeFileSync(`${out}/topology.json`, `${JSON.stringify(topology, null, 2)}\n`);
  writeFileSync(`${out}/flows.csv`, flowsCsv(flows, name));
  writeFileSync(`${out}/outcomes.csv`, outcomesCsv(outcomes, r, name));
  const senders = sendersCsv(r, name);
  if (senders !== null) writeFileSync(`${out}/senders.csv`, senders);
  writeFileSync(`${out}/queues.csv`, queuesCsv(r));
  if (r.reports.some((rep) => rep.clock)) writeClockFiles(out, r);
  writeFileSync(`${out}/nodes.json`, `${JSON.stringify(nodeRows(r), null, 2)}\n`);
  writeFileSync(
    `${out}/events.jsonl`,
    r.events.map((e) => JSON.stringify(e)).join('\n') + (r.events.length ? '\n' : ''),
  );
  const files = schemeDefinition(r.scenario.scheme.kind).files?.(r.scenario.scheme, r) ?? {};
  for (const [file, text] of Object.entries(files)) writeFileSync(`${out}/${file}`, text);
  // the run's line once its figures are written (the plots follow, and do not change them)
  const logged = appendRunLog(out, summary, r.reports);
  const problems = logged === null ? [] : [logged];
  if (!r.scenario.run.plots) return problems;
  problems.push(...(await writeRunPlots(out, r, summary, flows)).problems);
  // the page shows the plots: it follows them (loaded here only: its layout library is not small)
  const { writeRunPage } = await import('../page/run-page.js');
  return [...problems, ...(await writeRunPage(out)).problems];
}

/** flows.csv: a row per planned flow, nodes by name. */
function flowsCsv(flows: FlowRow[], name: (id: number) => string): string {
  const fl = [
    'id,src,dst,size,start_ns,finish_ns,fct_ns,ideal_ns,slowdown,retransmits,timeouts,via,frames_sent,frames_received,outcome,deadline_ns,best_effort',
  ];
  for (const f of flows) {
    fl.push(
      [
        f.id,
        name(f.src),
        name(f.dst),
        f.size,
        f.start.toFixed(0),
        f.finish.toFixed(0),
        f.fct.toFixed(0),
        f.ideal.toFixed(0),
        f.slowdown.toFixed(3),
        f.retransmits,
        f.timeouts,
        f.via.map(name),
        f.framesSent ?? '',
        f.framesReceived ?? '',
        f.outcome,
        f.deadline ?? '',
        f.bestEffort ? 1 : '',
      ]
        .map(csvCell)
        .join(','),
    );
  }
  return `${fl.join('\n')}\n`;
}

/** outcomes.csv: each flow not done, and why. */
function outcomesCsv(outcomes: FlowNotDone[], r: FabricResult, name: (id: number) => string): string {
  const planned = new Map(r.plan.flows.map((f) => [f.id, f]));
  return `${[
    'id,src,dst,outcome,reason',
    ...outcomes.map((o) => {
      const f = planned.get(o.id);
      return [o.id, f ? name(f.src) : '', f ? name(f.dst) : '', o.outcome, csvField(o.reason)].join(',');
    }),
  ].join('\n')}\n`;
}

/** senders.csv: what each sender delivered per run.interval (the series summary.fairness is made of), or null. */
function sendersCsv(r: FabricResult, name: (id: number) => string): string | null {
  const bySrc = bytesBySource(r.reports);
  if (bySrc.size === 0) return null;
  const every = r.scenario.run.intervalNs;
  const rows = ['t_ns,src,bytes,mbps'];
  const n = Math.max(...[...bySrc.values()].map((b) => b.length));
  const srcs = [...bySrc.keys()].sort((a, b) => a - b);
  for (let i = 0; i < n; i++)
    for (const src of srcs) {
      const bytes = bySrc.get(src)![i] ?? 0;
      rows.push(`${i * every},${name(src)},${bytes},${Math.round((bytes * 8e6) / every) / 1000}`);
    }
  return `${rows.join('\n')}\n`;
}

/** queues.csv: every sampled egress queue, virtual ns since traffic start. */
function queuesCsv(r: FabricResult): string {
  const q = ['node,port,peer,t_ns,bytes'];
  for (const rep of r.reports) {
    for (const s of rep.queues) {
      for (let i = 0; i < s.t.length; i++)
        q.push(`${rep.name},${s.port},${s.peer},${(s.t[i] - r.trafficStart).toFixed(0)},${s.v[i]}`);
    }
  }
  return `${q.join('\n')}\n`;
}

/** nodes.json: each report's fidelity, counters and ports. */
function nodeRows(r: FabricResult) {
  return r.reports.map((rep) => {
    const late = Histogram.from(rep.fidelity.lateness);
    return {
      name: rep.name,
      lateP50Ns: late.quantile(0.5),
      lateP99Ns: late.quantile(0.99),
      causalityMisses: rep.fidelity.causalityMisses,
      framesHandled: rep.fidelity.framesHandled,
      eventsHandled: rep.fidelity.eventsHandled,
      counters: rep.metrics.counters,
      ports: rep.ports,
      // a node the timeline killed or stopped: its counters up to then
      ...(rep.end === 'halt' && { haltedAt: Math.round(rep.now - r.trafficStart) }),
    };
  });
}
