/**
 * Human-readable output: the live progress line and the summary table printed after a run.
 */
import { formatNs } from '../../core/time.js';
import { schemeDefinition } from '../registry/index.js';
import type { Progress } from './engine.js';
import { REPAIRS } from './fired.js';
import type { Summary } from './results.js';

/**
 * One progress line: virtual time reached by the slowest node, flows, faults, frames per wall second;
 * conservative mode adds the speed (virtual µs per wall second) and the node holding the fabric back;
 * dilated mode the fidelity so far. `wallS` is the wall time since traffic started.
 */
export function progressLine(p: Progress, wallS = 0): string {
  const pct = p.frames > 0 ? ((100 * p.misses) / p.frames).toFixed(3) : '0.000';
  const rate = wallS > 0 ? ` | ${Math.round(p.frames / wallS / 1000)}k frames/s` : '';
  const tail =
    p.holder !== undefined
      ? ` | ${wallS > 0 ? (p.virtualNs / 1000 / wallS).toFixed(0) : '-'} µs/s, slowest ${p.holder}`
      : ` | late p99 ${formatNs(p.late99Ns)}, misses ${pct}%`;
  return (
    `virtual ${formatNs(p.virtualNs)} / ${formatNs(p.endNs)}` +
    ` | flows ${p.flowsDone}/${p.flowsTotal} done (${p.flowsStarted} started)` +
    ` | faults ${p.faultsFired}/${p.faultsTotal}${rate}${tail}`
  );
}

function kb(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(1)} KB`;
}

/** The summary printed after a run, as aligned lines. */
export function summaryTable(s: Summary, out: string): string {
  const rows = summaryRows(s, out);
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`).join('\n');
}

type Row = [string, string];

/** The summary's rows, what and how much: the terminal's table and the results page's overview. */
export function summaryRows(s: Summary, out: string): Row[] {
  const rows: Row[] = [...runRows(s), ...computeRows(s), ...faultRows(s)];
  const driver = schemeDefinition(s.scheme);
  const own = driver.summaryKey ? s[driver.summaryKey] : undefined;
  if (own !== undefined && driver.reportRows) rows.push(...driver.reportRows(own, s));
  rows.push(...clockRows(s));
  if (s.capture) {
    const frames = s.capture.reduce((n, c) => n + c.frames, 0);
    const dropped = s.capture.reduce((n, c) => n + c.dropped, 0);
    rows.push([
      'capture',
      `${frames} frames in ${s.capture.length} pcapng files in capture/${dropped > 0 ? `; ${dropped} past run.captureLimit not written` : ''}`,
    ]);
  }
  const reused = s.processes.reused ? ` (${s.processes.reused} of them earlier runs')` : '';
  rows.push([
    'processes',
    `${s.processes.started} started${reused}, ${s.processes.leftRunning} left running`,
  ]);
  rows.push(['results', out]);
  return rows;
}

/** The run: what ran, how far, its flows, queues, drops, strangers and fidelity. */
function runRows(s: Summary): Row[] {
  return [
    [
      'scenario',
      `${s.scenario} (${s.runtime} runtime, ${s.sync === 'dilated' ? `dilated, tdf ${s.tdf}` : 'conservative'})`,
    ],
    ['virtual time', `${formatNs(s.virtualNs)} in ${(s.wallMs / 1000).toFixed(1)} s wall`],
    ...(s.interrupted
      ? ([
          [
            'interrupted',
            `by ${s.interrupted.by} at ${formatNs(s.interrupted.atNs)}, during ${s.interrupted.during}: unfinished flows are running, not failed`,
          ],
        ] as Row[])
      : []),
    ...(s.crashes ?? []).map(
      (c): Row => ['crashed', `${c.node} at ${formatNs(c.t)} (${c.reason}): not reproducible`],
    ),
    [
      'flows',
      `${s.flows.completed} completed / ${s.flows.started} started / ${s.flows.planned} planned${s.flows.unfinished > 0 ? ` (${s.flows.unfinished} unfinished: FCT p99 with them ≥ ${formatNs(s.flows.fctP99CensoredNs)})` : ''}`,
    ],
    ...(s.flows.failed + s.flows.unexplained > 0
      ? ([
          [
            'not completed',
            `${s.flows.failed} failed (a fault explains them), ${s.flows.unexplained} unexplained: see outcomes.csv`,
          ],
        ] as Row[])
      : []),
    ['FCT p50 / p99', `${formatNs(s.flows.fctP50Ns)} / ${formatNs(s.flows.fctP99Ns)}`],
    ['slowdown p50 / p99', `${s.flows.slowdownP50.toFixed(2)} / ${s.flows.slowdownP99.toFixed(2)}`],
    ...(s.flows.deadlines
      ? ([
          [
            'deadlines missed',
            `${s.flows.deadlines.missed} of ${s.flows.deadlines.flows} (${(100 * s.flows.deadlines.missRatio).toFixed(1)}%)`,
          ],
        ] as Row[])
      : []),
    ['retransmits / timeouts', `${s.flows.retransmits} / ${s.flows.timeouts}`],
    [
      'switch queues p50/p99/p99.9/max',
      `${kb(s.queues.p50Bytes)} / ${kb(s.queues.p99Bytes)} / ${kb(s.queues.p999Bytes)} / ${kb(s.queues.maxBytes)}`,
    ],
    [
      'drops congestion / fault / malformed',
      `${s.drops.congestion} / ${s.drops.fault} / ${s.drops.malformed}`,
    ],
    ...(s.security.refusedControl + s.security.foreignDatagrams + s.security.forgedDatagrams > 0
      ? ([
          [
            'refused control / foreign / forged',
            `${s.security.refusedControl} / ${s.security.foreignDatagrams} / ${s.security.forgedDatagrams}  (strangers, kept out)`,
          ],
        ] as Row[])
      : []),
    [
      'fidelity',
      `late p99 ${formatNs(s.fidelity.lateP99Ns)}, causality misses ${s.fidelity.causalityMisses}/${s.fidelity.framesHandled} (${(100 * s.fidelity.missRate).toFixed(3)}%)${s.fidelity.ok ? '' : s.sync === 'dilated' ? '  ** above threshold: raise --tdf **' : '  ** a bug: conservative runs have none **'}`,
    ],
  ];
}

/** What computation cost, per node with a compute model. */
function computeRows(s: Summary): Row[] {
  const rows: Row[] = [];
  for (const c of s.compute?.nodes ?? [])
    rows.push([
      `compute ${c.node}`,
      `${c.model}: busy ${(100 * c.busyFraction).toFixed(1)}%${Object.entries(c.pools ?? {})
        .map(
          ([name, p]) =>
            `, ${name} ${p.cores} core${p.cores > 1 ? 's' : ''} ${(100 * p.busyFraction).toFixed(1)}%`,
        )
        .join(
          '',
        )} (${c.charged} charges), ${c.waited} events waited, longest ${formatNs(c.maxWaitNs)}${c.model === 'measured' ? ' (measured: not reproducible)' : ''}`,
    ]);
  return rows;
}

/** Each timeline action: when, how soon it was detected, and the in-flight flows it met. */
function faultRows(s: Summary): Row[] {
  const rows: Row[] = [];
  for (const f of s.faults) {
    const what = f.node ?? f.link?.join('-') ?? '';
    let v = `${f.action} ${what} at ${formatNs(f.t)}`;
    const seen = REPAIRS.has(f.action) ? 'seen up again' : 'detected';
    v += f.detectionNs !== null ? `, ${seen} after ${formatNs(f.detectionNs)}` : `, not ${seen}`;
    if (f.flowsInFlight !== undefined)
      v += `; ${f.flowsRecovered}/${f.flowsInFlight} in-flight flows through it recovered`;
    rows.push(['fault', v]);
  }
  return rows;
}

/** The clocks: free-running error, or PTP's lock, error and failovers. */
function clockRows(s: Summary): Row[] {
  const rows: Row[] = [];
  const c = s.clocks;
  if (c && c.timestamping === 'none') {
    rows.push([
      'clocks (free-running)',
      `|error| p50 ${formatNs(c.errP50Ns)} / p99 ${formatNs(c.errP99Ns)} / max ${formatNs(c.errMaxNs)} (no PTP)`,
    ]);
  } else if (c) {
    const mode = `${c.timestamping}, ${c.delayMechanism ?? 'e2e'}${c.switchClocks === 'none' ? '' : ` + ${c.switchClocks} clocks`}`;
    const lock =
      c.timeToLockNs === null
        ? ''
        : c.timeToLockNs < 0
          ? ` ${formatNs(-c.timeToLockNs)} before traffic started`
          : ` by ${formatNs(c.timeToLockNs)}`;
    const gm = c.grandmaster !== null ? `, grandmaster ${c.grandmaster}` : '';
    rows.push(['clocks (PTP)', `${mode}: ${c.lockedNodes}/${c.slaves} slaves locked${lock}${gm}`]);
    rows.push([
      '|clock error| after lock',
      `p50 ${formatNs(c.errP50Ns)} / p99 ${formatNs(c.errP99Ns)} / max ${formatNs(c.errMaxNs)}, mean ${formatNs(c.meanErrNs)}`,
    ]);
    rows.push([
      '|clock error| every sample',
      `p50 ${formatNs(c.allSamples.errP50Ns)} / p99 ${formatNs(c.allSamples.errP99Ns)} / max ${formatNs(c.allSamples.errMaxNs)} (every slave, locked or not, from traffic start)`,
    ]);
    if (c.stampNoiseP99Ns !== null) {
      rows.push([
        'software stamp delay',
        `p50 ${formatNs(c.stampNoiseP50Ns!)} / p99 ${formatNs(c.stampNoiseP99Ns)} (event-loop jitter)`,
      ]);
    }
    for (const f of c.failovers) {
      rows.push([
        'grandmaster failover',
        `${f.killed} killed at ${formatNs(f.t)}: ${f.grandmaster ?? 'nobody'} took over, all slaves locked again ${f.relockNs !== null ? `after ${formatNs(f.relockNs)}` : 'never'}`,
      ]);
    }
  }
  return rows;
}
