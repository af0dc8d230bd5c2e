/**
 * What became of every planned flow: completed, failed for a reason the run's faults give, or
 * unexplained. A flow fails with a reason when an endpoint was killed, paused or cut off, when no
 * path joined its ends once the faults had struck, or (a transport that does not retransmit) when it
 * lost frames while a fault that drops frames was in force on one of its paths, or to a full buffer on
 * one, or when the scheme itself reported it ended undelivered (its own reason). Anything else left
 * unfinished is unexplained: the transport or the fabric did not recover
 * although it could have, or frames vanished where no fault and no full buffer was. Chaos
 * runs hold every flow to this (orchestrator/chaos/); every run writes it into flows.csv.
 */

import type { Impairment } from '../../core/impair.js';
import type { FlowSpec } from '../../core/messages.js';
import { formatNs } from '../../core/time.js';
import type { Topology } from '../../topology/types.js';
import { type FiredFault, LINK_DROPS, OUTAGE_ENDS, OUTAGES } from './fired.js';

/**
 * `stopped`: the workload stopped it before it was all acknowledged (a list flow's `stop`: the
 * application closed it). `running`: unfinished when the run was stopped before the scenario's end (a library run's `runFor`),
 * or still getting new data at the end of the run, faults or not (the drain ran out on it)
 */
export type Outcome = 'completed' | 'failed' | 'unexplained' | 'running' | 'stopped';

export interface FlowOutcome {
  outcome: Outcome;
  /** why it failed, or why it is unexplained; '' when completed */
  reason: string;
}

/** A flow as the collector merged it (times in virtual ns since traffic start; finish −1 when unfinished). */
export interface FlowFacts {
  id: number;
  start: number;
  finish: number;
  retransmits: number;
  timeouts: number;
  framesSent?: number;
  framesReceived?: number;
  /** unfinished: when the receiver last got new data */
  lastProgress?: number;
  /** when the application stopped it before it was acknowledged (`FlowSpec.stop`) */
  stopped?: number;
}

/** An unfinished flow that got new data this close to the end was still moving: too slow, not stuck. */
export const PROGRESS_NS = 1_000_000;

export interface OutcomeInput {
  topology: Topology;
  /** every planned flow; those missing from `flows` never reported a start */
  planned: FlowSpec[];
  flows: FlowFacts[];
  faults: FiredFault[];
  /** when the run ended, virtual ns since traffic start */
  endNs: number;
  /** whether it ended before the scenario's end (workload duration + drain): a stopped run */
  stoppedEarly: boolean;
  /** whether the transport repairs losses (false: UDP) */
  reliable: boolean;
  /** egress ports that dropped frames on full buffers, as `node>peer` */
  congested: ReadonlySet<string>;
  /** flows the scheme itself ended undelivered, with its reason (a Harmony message failed or rejected) */
  reported?: ReadonlyMap<number, string>;
}

interface Span {
  fault: FiredFault;
  from: number;
  until: number;
}

/**
 * A fault as a reason names it: its action and node or link, and the action that made it, when one
 * did (a partition names its groups: every link it cut reads the same, so a reason lists it once).
 */
function faultLabel(f: FiredFault): string {
  const by = f.detail?.by as string | undefined;
  const groups = f.detail?.groups as string[][] | undefined;
  if ((by === 'partition' || by === 'heal') && groups)
    return `${by} ${groups.map((g) => `[${g.join(', ')}]`).join(' | ')} at ${formatNs(f.t)}`;
  const what = `${f.action} ${f.node ?? f.link!.join('–')}`;
  return by === 'link-flap' ? `${what} (link-flap) at ${formatNs(f.t)}` : `${what} at ${formatNs(f.t)}`;
}

/** When each node and each link fault was in force. */
export function faultSpans(faults: FiredFault[]): { nodes: Map<string, Span[]>; links: Span[] } {
  const sorted = [...faults].sort((a, b) => a.t - b.t);
  const nodes = new Map<string, Span[]>();
  const links: Span[] = [];
  sorted.forEach((f, i) => {
    if (f.node !== undefined && OUTAGES.has(f.action)) {
      const back = OUTAGE_ENDS[f.action];
      const end = back ? sorted.slice(i + 1).find((g) => g.action === back && g.node === f.node) : undefined;
      const spans = nodes.get(f.node) ?? [];
      spans.push({ fault: f, from: f.t, until: end ? end.t : Number.POSITIVE_INFINITY });
      nodes.set(f.node, spans);
    }
    if (f.link && LINK_DROPS.has(f.action)) {
      const detail = f.detail ?? {};
      if (f.action === 'link-lossy' && !((detail.loss as number) > 0 || (detail.corrupt as number) > 0))
        return;
      // an impairment explains lost frames only when it loses or corrupts some
      const impair = detail.impair as Impairment | undefined;
      if (f.action === 'link-impair' && !(impair?.loss || impair?.corrupt)) return;
      const same = (g: FiredFault) => g.link?.includes(f.link![0]) === true && g.link.includes(f.link![1]);
      const end = sorted
        .slice(i + 1)
        .find(
          (g) =>
            same(g) && (g.action === 'link-up' || g.action === 'link-lossy' || g.action === 'link-impair'),
        );
      links.push({ fault: f, from: f.t, until: end ? end.t : Number.POSITIVE_INFINITY });
    }
  });
  return { nodes, links };
}

/** Whether `src` and `dst` are joined by live nodes and links once every outage in force at `t` is counted. */
function connected(
  topo: Topology,
  spans: ReturnType<typeof faultSpans>,
  src: string,
  dst: string,
  t: number,
): boolean {
  const out = (name: string) => (spans.nodes.get(name) ?? []).some((s) => s.from <= t && s.until > t);
  const cut = new Set<string>();
  for (const s of spans.links)
    if (s.from <= t && s.until > t && s.fault.action === 'link-down') {
      const [a, b] = s.fault.link!;
      cut.add(`${a}\n${b}`);
      cut.add(`${b}\n${a}`);
    }
  if (out(src) || out(dst)) return false;
  const byName = new Map(topo.nodes.map((n) => [n.name, n]));
  const seen = new Set([src]);
  const queue = [src];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (name === dst) return true;
    for (const p of byName.get(name)!.ports) {
      if (p.dir === 'control' || seen.has(p.peer) || cut.has(`${name}\n${p.peer}`) || out(p.peer)) continue;
      // a host is an end, never a relay
      if (byName.get(p.peer)!.role === 'host' && p.peer !== dst) continue;
      seen.add(p.peer);
      queue.push(p.peer);
    }
  }
  return false;
}

/**
 * Hop distances from a host over the data plane (hosts are ends, never relays), computed on first use
 * and kept: what says whether a node or a link lies on some shortest path of a flow, where its frames
 * go (up/down routing takes shortest paths; a detour starts at a failure on one).
 */
function hostDistances(topo: Topology): (host: string) => Map<string, number> {
  const byName = new Map(topo.nodes.map((n) => [n.name, n]));
  const memo = new Map<string, Map<string, number>>();
  return (host) => {
    let d = memo.get(host);
    if (d) return d;
    d = new Map([[host, 0]]);
    const queue = [host];
    for (let i = 0; i < queue.length; i++) {
      const name = queue[i];
      const n = byName.get(name)!;
      if (n.role === 'host' && name !== host) continue;
      for (const p of n.ports) {
        if (p.dir === 'control' || d.has(p.peer)) continue;
        d.set(p.peer, d.get(name)! + 1);
        queue.push(p.peer);
      }
    }
    memo.set(host, d);
    return d;
  };
}

/** Every planned flow's outcome, by flow id. */
export function flowOutcomes(input: OutcomeInput): Map<number, FlowOutcome> {
  const topo = input.topology;
  const dist = hostDistances(topo);
  const hop = (from: string, to: string) => dist(from).get(to) ?? Number.POSITIVE_INFINITY;
  const ctx: Judge = {
    input,
    spans: faultSpans(input.faults),
    crosses: (src, dst, a, b) => hop(src, a) + 1 + hop(dst, b) === hop(src, dst),
    through: (src, dst, node) => hop(src, node) + hop(dst, node) === hop(src, dst),
    name: (id) => topo.nodes[id]?.name ?? String(id),
  };
  const rows = new Map(input.flows.map((f) => [f.id, f]));
  const out = new Map<number, FlowOutcome>();
  for (const spec of input.planned) {
    const outcome = outcomeOf(spec, rows.get(spec.id), ctx);
    if (outcome) out.set(spec.id, outcome);
  }
  return out;
}

/** What judging a flow's outcome needs: the run, its faults' spans and the shortest paths. */
interface Judge {
  input: OutcomeInput;
  spans: ReturnType<typeof faultSpans>;
  /** whether frames from `src` to `dst` may cross `a` then `b` (a shortest path takes that hop) */
  crosses: (src: string, dst: string, a: string, b: string) => boolean;
  /** whether a shortest path from `src` to `dst` goes through `node` */
  through: (src: string, dst: string, node: string) => boolean;
  name: (id: number) => string;
}

const running = (reason: string): FlowOutcome => ({ outcome: 'running', reason });
const failed = (reason: string): FlowOutcome => ({ outcome: 'failed', reason });

/** One planned flow's outcome (undefined: a flow planned past an interrupted run's end, left out). */
function outcomeOf(spec: FlowSpec, row: FlowFacts | undefined, ctx: Judge): FlowOutcome | undefined {
  const { input } = ctx;
  const endNs = input.endNs;
  if (spec.start > endNs) return pastTheEnd(spec, row, input);
  if (row && row.finish >= 0) return { outcome: 'completed', reason: '' };
  if (row?.stopped !== undefined)
    return { outcome: 'stopped', reason: `stopped by the workload at ${formatNs(row.stopped)}` };
  const src = ctx.name(spec.src);
  const dst = ctx.name(spec.dst);
  const from = row ? row.start : spec.start;
  const endpoint = endpointOutage(ctx, src, dst, from);
  if (endpoint) return failed(endpoint);
  if (!row)
    return input.stoppedEarly
      ? running(`not started when the run stopped at ${formatNs(endNs)}`)
      : { outcome: 'unexplained', reason: `never started (planned at ${formatNs(spec.start)})` };
  if (!connected(input.topology, ctx.spans, src, dst, endNs)) return failed(noPath(ctx, src, dst));
  if (!input.reliable && (row.framesReceived ?? 0) < (row.framesSent ?? 0)) {
    const lost = lossCause(ctx, src, dst, from);
    if (lost) return failed(lost);
  }
  const reported = input.reported?.get(spec.id);
  if (reported !== undefined) return failed(reported);
  if (input.stoppedEarly) return running(`still running when the run stopped at ${formatNs(endNs)}`);
  if (row.lastProgress !== undefined && row.lastProgress >= endNs - PROGRESS_NS)
    // the drain ran out on it, faults or not: moving is neither a failure nor stuck
    return running(
      `the drain ran out: still delivering when the run ended (new data ${formatNs(endNs - row.lastProgress)} before the end); a longer run.drain lets it finish`,
    );
  // joined, yet a link on its way lost frames to the end: a gray failure (or a lossy link) stalled it
  const lossy = linkSpansOnPath(ctx, src, dst).find(
    (sp) => sp.fault.action !== 'link-down' && sp.until >= endNs && sp.from <= endNs,
  );
  if (lossy)
    return failed(
      `unfinished: ${faultLabel(lossy.fault)} was losing frames on its way to the end (${row.retransmits} retransmits, ${row.timeouts} timeouts)`,
    );
  return {
    outcome: 'unexplained',
    reason: `unfinished though ${src} and ${dst} stayed joined (${row.retransmits} retransmits, ${row.timeouts} timeouts)`,
  };
}

/** A flow planned past where the run stopped. */
function pastTheEnd(
  spec: FlowSpec,
  row: FlowFacts | undefined,
  input: OutcomeInput,
): FlowOutcome | undefined {
  const endNs = input.endNs;
  if (row)
    // planned past where the run stopped, yet started: a node ahead of the slowest (an interrupted
    // run inside a long grant) ran it
    return row.finish >= 0
      ? { outcome: 'completed', reason: '' }
      : running(
          `started at ${formatNs(row.start)} on a node past where the run stopped (${formatNs(endNs)})`,
        );
  // past the end of a run that was not interrupted (the admissible workload may move a start past
  // the drain's end at a load near 1): never started, unfinished like a flow the end caught. An
  // interrupted run leaves the plan's future out of its results.
  if (input.stoppedEarly) return undefined;
  return running(
    `planned at ${formatNs(spec.start)}, past where the run stopped (${formatNs(endNs)}): never started`,
  );
}

/** An endpoint out of action at some point of the flow's life, as a reason, or null. */
function endpointOutage(ctx: Judge, src: string, dst: string, from: number): string | null {
  const endpoint = [
    ['sender', src],
    ['receiver', dst],
  ]
    .flatMap(([role, node]) =>
      (ctx.spans.nodes.get(node) ?? [])
        .filter((s) => s.until > from && s.from <= ctx.input.endNs)
        .map((s) => ({ role, s })),
    )
    .sort((a, b) => a.s.from - b.s.from)[0];
  if (!endpoint) return null;
  const back = Number.isFinite(endpoint.s.until) ? ` (back at ${formatNs(endpoint.s.until)})` : '';
  return `${endpoint.role} ${faultLabel(endpoint.s.fault)}${back}`;
}

/** No path from `src` to `dst` at the end: the outages in force then (another host's cuts no path but its own). */
function noPath(ctx: Judge, src: string, dst: string): string {
  const { topology: topo, endNs } = ctx.input;
  const relays = [...ctx.spans.nodes.entries()]
    .filter(([n]) => topo.nodes.find((x) => x.name === n)?.role !== 'host')
    .flatMap(([, s]) => s);
  const cause = [...relays, ...ctx.spans.links]
    .filter((s) => s.from <= endNs && s.until > endNs)
    .sort((a, b) => a.from - b.from)
    .map((s) => faultLabel(s.fault));
  return `no path from ${src} to ${dst} at the end: ${[...new Set(cause)].join(', ')}`;
}

/** The link faults in force on a link of one of the flow's shortest paths, either direction. */
function linkSpansOnPath(ctx: Judge, src: string, dst: string) {
  return ctx.spans.links.filter((s) => {
    const [a, b] = s.fault.link!;
    return ctx.crosses(src, dst, a, b) || ctx.crosses(src, dst, b, a);
  });
}

/**
 * Why an unreliable flow lost frames, or null: only a fault its frames may have met (a switch on one
 * of its shortest paths, or a link of one), or a full queue on one.
 */
function lossCause(ctx: Judge, src: string, dst: string, from: number): string | null {
  const { topology: topo, endNs } = ctx.input;
  const switchOutages = [...ctx.spans.nodes.entries()]
    .filter(([n]) => topo.nodes.find((x) => x.name === n)?.role === 'switch' && ctx.through(src, dst, n))
    .flatMap(([, s]) => s);
  const links = linkSpansOnPath(ctx, src, dst);
  const dropping = [...switchOutages, ...links]
    .filter((s) => s.until > from && s.from <= endNs)
    .sort((a, b) => a.from - b.from);
  if (dropping.length > 0)
    return `frames lost while ${faultLabel(dropping[0].fault)} was in force (the transport does not retransmit)`;
  const full = [...ctx.input.congested].find((k) => {
    const [a, b] = k.split('>');
    return ctx.crosses(src, dst, a, b);
  });
  if (full !== undefined)
    return `frames lost to congestion at ${full.replace('>', '→')} (the transport does not retransmit)`;
  return null;
}

/** A planned flow that did not complete, and why. */
export type FlowNotDone = FlowOutcome & { id: number };
