/**
 * F10 (and its PortLand-style baseline) as the orchestrator sees it: settings, the controller as an
 * arbiter process with a control link to every switch, each node's F10 config (its address, its
 * neighbours', the detector) and `summary.f10` with its report lines.
 */

import {
  type ArbiterSpec,
  dataPlane,
  defineScheme,
  formatNs,
  percent,
  type SchemeNodeConfig,
  type Topology,
  type TopoNode,
} from '../../sdk/index.js';
import type { F10ArbiterConfig } from './arbiter/role.js';
import { F10_CONTROLLERS, F10_KIND, type F10Config, type F10LinkConfig } from './config.js';
import { type F10Settings, f10Properties, resolveF10 } from './definition/settings.js';
import { type F10Summary, summarizeF10 } from './definition/summary.js';

/** the controllers a run has: the primary, and with `controller.backup` the backup (F10 §8) */
const controllersOf = (s: F10Settings): string[] => F10_CONTROLLERS.slice(0, s.backup ? 2 : 1);

export default defineScheme<F10Settings, F10Summary>({
  kinds: ['f10', 'portland'],
  parts: 'dcemu/schemes/f10/parts',
  // its switches reroute; the run's own transport carries every flow
  stopsFlows: () => true,
  properties: f10Properties,
  resolve: resolveF10,

  arbiters(s: F10Settings, topo: Topology): ArbiterSpec[] {
    const links = topo.nodes
      .filter((n) => n.role === 'switch')
      .map((n) => ({ to: n.name, ...s.controlLink }));
    return controllersOf(s).map((name) => ({ name, links }));
  },

  nodeScheme(s: F10Settings, topo: Topology, node: TopoNode): SchemeNodeConfig | undefined {
    if (node.role === 'host') return wrap<F10LinkConfig>({ detector: s.detector });
    if (node.role === 'arbiter') {
      const cfg: F10ArbiterConfig = {
        mode: s.kind,
        detector: s.controlDetector,
        epochNs: s.epochNs,
        stableNs: s.stableNs,
        reactionDelayNs: s.reactionDelayNs,
        reportNs: s.reportNs,
        predictableDelta: s.predictableDelta,
        topology: dataPlane(topo),
        switches: node.ports.map((p) => p.peer),
        controllers: controllersOf(s),
      };
      return wrap(cfg);
    }
    if (!node.f10 || !topo.f10) return undefined;
    const { byName, hostTor } = addressing(topo);
    const cfg: F10Config = {
      mode: s.kind === 'f10' ? 'f10' : 'controller',
      pushback: s.pushback,
      ...(s.kind === 'portland' && s.localFailover ? { localFailover: true } : {}),
      shape: topo.f10,
      self: node.f10,
      peers: node.ports.map((p) => byName.get(p.peer)?.f10 ?? null),
      hostTor,
      detector: s.detector,
      controlDetector: s.controlDetector,
      reportNs: s.reportNs,
      congestion: s.congestion,
      lossIntervalNs: s.lossIntervalNs,
    };
    return wrap(cfg);
  },

  experiments: [
    {
      name: 'f10-fig8',
      description:
        "F10 §7.4 figure 8: per seed, one workload and failure trace from the chaos: model on F10 and the PortLand baseline, their failure-free controls and two ablations; PortLand's congestion loss over F10's in total and the CDF of congestion loss per interval",
      scenario: 'examples/f10-fig8.yaml',
      seeds: 3,
      // F10 and PortLand always run (`--variants f10,portland`: those alone); the controls and ablations
      // when chosen (schemes/f10/experiments.ts)
      variants: [
        'f10',
        'portland',
        'f10-no-failures',
        'portland-no-failures',
        'f10-no-congestion-pushback',
        'portland-local-failover',
      ],
      module: new URL('./experiments.js', import.meta.url).href,
      run: 'runFig8',
    },
    {
      name: 'f10-fig9',
      description:
        "F10 §7.6 figure 9: per seed, MapReduce shuffles over TCP (our job shapes) and a failure trace from the chaos: model on F10 and the PortLand baseline; each job's speedup, PortLand's completion time over F10's",
      scenario: 'examples/f10-fig9.yaml',
      seeds: 3,
      module: new URL('./experiments/fig9.js', import.meta.url).href,
      run: 'runFig9',
    },
    {
      name: 'f10-fig6',
      description:
        "F10 §7.3 figure 6: the scenario's one failure on F10 and on the PortLand baseline; losses over time by cause, and the time to recover",
      scenario: 'examples/f10-fig6.yaml',
      seeds: 1,
      module: new URL('./experiments/fig6.js', import.meta.url).href,
      run: 'runFig6',
    },
  ],

  summaryKey: 'f10',
  summarize: summarizeF10,

  /**
   * F10 (§5): once a switch has declared a port dead it sends nothing more into it. (The PortLand-style
   * baseline makes no such promise: its switches wait for the controller.)
   */
  invariants(f10): Array<{ invariant: string; detail: string }> {
    if (f10.scheme !== 'f10') return [];
    return f10.failures
      .filter((f) => f.lostAfterDetection > 0)
      .map((f) => ({
        invariant: 'f10-no-frame-into-dead-port',
        detail: `${f.action} ${f.target}${f.by ? ` (${f.by})` : ''} at ${formatNs(f.t)}: ${f.lostAfterDetection} frames sent into a port known dead`,
      }));
  },

  sweepFigures(f10): Record<string, number | string | null> {
    return {
      f10_congestion_loss_p50: f10.congestionLoss.p50,
      f10_congestion_loss_mean: f10.congestionLoss.mean,
      f10_congestion_drops: f10.congestionLoss.total,
      f10_lost_total: f10.lost.total,
    };
  },

  reportRows(f10, summary: Record<string, unknown>): Array<[string, string]> {
    const rows: Array<[string, string]> = [];
    const frames = summary.frames as { sent: number; received: number } | undefined;
    if (frames) rows.push(['UDP frames sent / received', `${frames.sent} / ${frames.received}`]);
    for (const f of f10.failures) {
      const after = (t: number | null) =>
        t !== null && f.detectedAt !== null ? formatNs(t - f.detectedAt) : '-';
      rows.push([
        `${f10.scheme} ${f.action} ${f.target}`,
        `reroute +${after(f.firstRerouteAt)}, pushback done +${after(f.pushbackCompleteAt)}, ${f10.scheme === 'f10' ? 'rebalance' : 'routes'} +${after(f.rebalanceAt)} after detection; lost ${f.lostBeforeDetection} before / ${f.lostAfterDetection} after`,
      ]);
    }
    const cl = f10.congestionLoss;
    rows.push([
      `${f10.scheme} congestion loss per ${formatNs(f10.intervals.intervalNs)}`,
      `p50 ${percent(cl.p50)}, p90 ${percent(cl.p90)}, max ${percent(cl.max)}, mean ${percent(cl.mean)} over ${cl.intervals} intervals (${cl.total} frames)`,
    ]);
    if (f10.scheme === 'f10') {
      const cp = f10.congestionPushback;
      rows.push([
        'f10 congestion pushback',
        `${cp.hot} hot links, ${cp.messages} messages, ${cp.installs} weight cuts, ${cp.removed} removed at epochs`,
      ]);
    }
    const b = f10.backup;
    if (b !== null)
      rows.push([
        `${f10.scheme} controllers`,
        `${b.acting.map((a) => `${a.controller} (term ${a.term}) from ${formatNs(a.from)}`).join(', ')}; ${b.takeovers} takeovers, ${b.stepDowns} stood down, ${b.staleCommands} stale commands ignored`,
      ]);
    const d = f10.detours;
    rows.push([
      `${f10.scheme} recovery`,
      `${f10.reroutes.up} moved to another parent, ${d.delivered} detoured (${d.plus2} +2 hops, ${d.plus4} +4, ${d.other} other), ${f10.reroutes.noRoute} without route; ${f10.pushback.messages} pushback messages${f10.spuriousDetections > 0 ? `; ** ${f10.spuriousDetections} links seen down that no fault hit: raise --tdf **` : ''}`,
    ]);
    return rows;
  },
});

/** Nodes by name and every host's ToR location: the same for every switch of a run, computed once. */
const addressings = new WeakMap<Topology, { byName: Map<string, TopoNode>; hostTor: number[] }>();

function addressing(topo: Topology): { byName: Map<string, TopoNode>; hostTor: number[] } {
  let a = addressings.get(topo);
  if (!a) {
    const byName = new Map(topo.nodes.map((n) => [n.name, n]));
    const hosts = topo.nodes.filter((n) => n.role === 'host');
    a = { byName, hostTor: hosts.map((h) => byName.get(h.ports[0].peer)!.f10!.location) };
    addressings.set(topo, a);
  }
  return a;
}

function wrap<C>(config: C): SchemeNodeConfig {
  return { kind: F10_KIND, config };
}
