/**
 * Flowtune (TR'16) as the orchestrator sees it: settings, the allocator `alloc` attached to every
 * spine (or the one switch of a star) by its own fast link, each node's config (hosts: the fabric,
 * the allocator's id and the control timing; the allocator: NED's parameters and the fabric it
 * models), `summary.flowtune` with its report lines, `rates.csv` (every rate a host applied), and the
 * promise chaos runs check: a link is never allocated beyond its capacity after normalization.
 */

import {
  type ArbiterSpec,
  defineScheme,
  Priority,
  type SchemeNodeConfig,
  type Topology,
  type TopoNode,
} from '../../sdk/index.js';
import {
  emptyRttNs,
  type FlowtuneSettings,
  flowtuneFabric,
  flowtuneProperties,
  flowtuneShape,
  resolveFlowtune,
} from './definition/settings.js';
import { type FlowtuneSummary, flowtuneRows, summarizeFlowtune } from './definition/summary.js';
import type { FlowtuneHostSection } from './host/transport.js';
import type { FlowtuneAllocatorConfig, FlowtuneHostConfig } from './wire.js';
import { FLOWTUNE_KIND } from './wire.js';

const fabrics = new WeakMap<Topology, ReturnType<typeof flowtuneFabric>>();
function fabricOf(topo: Topology) {
  let f = fabrics.get(topo);
  if (!f) fabrics.set(topo, (f = flowtuneFabric(topo)));
  return f;
}

/** The allocator's node name. */
export const ALLOCATOR = 'alloc';

export default defineScheme<FlowtuneSettings, FlowtuneSummary>({
  kinds: [FLOWTUNE_KIND],
  parts: 'dcemu/schemes/flowtune/parts',
  properties: flowtuneProperties,
  resolve: (src, topo) => resolveFlowtune(src, topo),

  arbiters(s: FlowtuneSettings, topo: Topology): ArbiterSpec[] {
    const { racks, spines } = flowtuneShape(topo) as { racks: TopoNode[]; spines: TopoNode[] };
    const to = spines.length > 0 ? spines : racks.slice(0, 1);
    const propNs = topo.links[to[0].ports[0].link].propNs;
    return [
      { name: ALLOCATOR, links: to.map((sw) => ({ to: sw.name, rateBps: s.allocatorLinkBps, propNs })) },
    ];
  },

  nodeScheme(s: FlowtuneSettings, topo: Topology, node: TopoNode): SchemeNodeConfig | undefined {
    const fabric = fabricOf(topo);
    const timing = {
      leaseNs: s.leaseNs,
      minRtoNs: s.minRtoNs,
      maxRtoNs: s.maxRtoNs,
      controlPriority: s.control === 'priority' ? Priority.Control : Priority.BestEffort,
    };
    if (node.role === 'host') {
      const allocator = topo.nodes.find((n) => n.role === 'arbiter')!.id;
      const config: FlowtuneHostConfig = { ...timing, allocator, fabric, rttNs: emptyRttNs(topo) };
      return { kind: FLOWTUNE_KIND, config };
    }
    if (node.role === 'arbiter') {
      const config: FlowtuneAllocatorConfig = {
        ...timing,
        gamma: s.gamma,
        iterationNs: s.iterationNs,
        threshold: s.threshold,
        headroom: s.headroom,
        normalize: s.normalize,
        heartbeatNs: s.heartbeatNs,
        fabric,
      };
      return { kind: FLOWTUNE_KIND, config };
    }
    return undefined;
  },

  experiments: [
    {
      name: 'flowtune-convergence',
      description:
        'Flowtune §6.3 (figure 4): five senders start and stop one by one, 10 ms apart as the paper (1 ms, the example, beside it and at --quick); per event, the time until every flow is within 10% of its fair share, Flowtune against DCTCP (scheme.kind=ecmp)',
      scenario: 'examples/flowtune.yaml',
      // its flows are listed: every seed runs the same trace (the figures agree to the digit)
      seeds: 2,
      module: new URL('./experiments.js', import.meta.url).href,
      run: 'runConvergence',
    },
    {
      name: 'flowtune-websearch',
      description:
        'Flowtune §6.5 (figures 8 and 9): p99 FCT by flowlet size and p99 queueing delay on 2-hop and 4-hop paths under the web workload, Flowtune (allocator killed as the scenario says, and left alive) against DCTCP',
      scenario: 'examples/flowtune-websearch.yaml',
      seeds: 5,
      module: new URL('./experiments.js', import.meta.url).href,
      run: 'runWebsearch',
    },
    {
      name: 'flowtune-loads',
      description:
        'Flowtune §6.5 (figures 8 and 9) across loads 0.2–0.8: p99 FCT and normalized FCT of short flowlets and p99 queueing delay on paths, Flowtune against DCTCP on the same trace at each load',
      scenario: 'examples/flowtune-websearch.yaml',
      seeds: 5,
      module: new URL('./experiments.js', import.meta.url).href,
      run: 'runLoads',
    },
  ],

  summaryKey: 'flowtune',
  summarize: (s, r, totals) => summarizeFlowtune(s, fabricOf(r.scenario.topology), r, totals),

  files(_s, r) {
    const t0 = r.trafficStart;
    const names = new Map(r.reports.map((rep) => [rep, rep.name]));
    const rows = ['t_ns,host,flow,rate_bps'];
    const all: Array<[number, string, number, number]> = [];
    for (const rep of r.reports) {
      const h = rep.scheme as FlowtuneHostSection | undefined;
      if (h?.host !== true) continue;
      for (const [t, flow, rate] of h.rateSeries) all.push([Math.round(t - t0), names.get(rep)!, flow, rate]);
    }
    all.sort((a, b) => a[0] - b[0] || a[2] - b[2]);
    for (const [t, host, flow, rate] of all) rows.push(`${t},${host},${flow},${rate}`);
    return { 'rates.csv': `${rows.join('\n')}\n` };
  },

  invariants(f): Array<{ invariant: string; detail: string }> {
    // with `normalize: none` NED's rates go out as computed: over-allocation is what that run studies
    // a crashed allocator cannot report its allocations: nothing to check (overAllocation null); a
    // killed one reported them up to its kill
    return f.normalize !== 'none' && f.overAllocation !== null && f.overAllocation.afterMaxGbps > 1e-3
      ? [
          {
            invariant: 'flowtune-normalized-within-capacity',
            detail: `normalized rates exceeded a link's capacity by ${f.overAllocation.afterMaxGbps} Gbit/s`,
          },
        ]
      : [];
  },

  reportRows: flowtuneRows,

  sweepFigures(f) {
    return {
      flowtune_converge_p50_ns: f.convergence.p50Ns,
      flowtune_converge_p99_ns: f.convergence.p99Ns,
      flowtune_control_fraction: f.control.fraction,
      flowtune_overalloc_before: f.overAllocation?.beforeMaxGbps ?? null,
      flowtune_applied_over_ns: f.appliedLoad.overNs,
      flowtune_optimality: f.optimality?.mean ?? null,
      flowtune_queue_delay_p99_ns: f.queueDelayP99Ns,
    };
  },
});
