/**
 * Fastpass (SIGCOMM'14) as the orchestrator sees it: settings, the arbiters as servers on ToR ports
 * (`arb0` the primary, `arb1`... secondaries in rank order), each node's config (hosts: timeslot and
 * FCP timing, their routes to the arbiters; arbiters: the fabric they route), `summary.fastpass` with
 * its report lines, and the promise chaos runs check: no packet is lost in the qdisc.
 */

import {
  type ArbiterSpec,
  defineScheme,
  type SchemeNodeConfig,
  type Topology,
  type TopoNode,
} from '../../sdk/index.js';
import {
  arbiterRacks,
  arbiterRoutes,
  crossRackLagSlots,
  type FastpassSettings,
  fastpassFabric,
  fastpassProperties,
  resolveFastpass,
} from './definition/settings.js';
import {
  type FastpassSummary,
  fastpassRejectedFlows,
  fastpassRows,
  summarizeFastpass,
} from './definition/summary.js';
import type { FastpassArbiterConfig, FastpassHostConfig } from './wire.js';
import { FASTPASS_KIND, notifyBatches } from './wire.js';

const fabrics = new WeakMap<Topology, ReturnType<typeof fastpassFabric>>();
function fabricOf(topo: Topology) {
  let f = fabrics.get(topo);
  if (!f) fabrics.set(topo, (f = fastpassFabric(topo)));
  return f;
}

export default defineScheme<FastpassSettings, FastpassSummary>({
  kinds: [FASTPASS_KIND],
  parts: 'dcemu/schemes/fastpass/parts',
  // the run's transport over the qdisc ends it; a message (messages: true) is sent whole once requested
  stopsFlows: (s) => s.messages === undefined,
  properties: fastpassProperties,
  resolve: (src, topo) => resolveFastpass(src, topo),

  arbiters(s: FastpassSettings, topo: Topology): ArbiterSpec[] {
    const h = topo.nodes.find((n) => n.role === 'host')!;
    const link = topo.links[h.ports[0].link];
    return arbiterRacks(topo, s.arbiters).map((tor, i) => ({
      name: `arb${i}`,
      links: [{ to: tor, rateBps: link.rateBps, propNs: link.propNs }],
    }));
  },

  nodeScheme(s: FastpassSettings, topo: Topology, node: TopoNode): SchemeNodeConfig | undefined {
    const fabric = fabricOf(topo);
    if (node.role === 'host') {
      const config: FastpassHostConfig = {
        slotNs: s.slotNs,
        horizonNs: s.horizonNs,
        arbiters: arbiterRoutes(fabric, node.id),
        aggregateNs: s.aggregateNs,
        timeoutNs: s.fcpTimeoutNs,
        lateNs: s.lateNs,
        limitBytes: s.qdiscLimitBytes,
        ...(s.messages && { messages: s.messages }),
      };
      return { kind: FASTPASS_KIND, config };
    }
    if (node.role === 'arbiter') {
      const config: FastpassArbiterConfig = {
        rank: fabric.arbiters.findIndex((a) => a.id === node.id),
        policy: s.policy,
        fcpShare: s.fcpShare,
        slotNs: s.slotNs,
        horizonNs: s.horizonNs,
        fabric,
        watchdogNs: s.watchdogNs,
        takeoverNs: s.takeoverNs,
        isolation: s.isolation,
        notifyBatches: notifyBatches(s),
        cores: s.cores,
        ...(s.messages && {
          messages: { ...s.messages, lagSlots: crossRackLagSlots(topo, s.slotNs) },
        }),
      };
      return { kind: FASTPASS_KIND, config };
    }
    // message mode: the switches stamp the queueing of message packets (switch/stamp.ts)
    if (node.role === 'switch' && s.messages) return { kind: FASTPASS_KIND, config: {} };
    return undefined;
  },

  experiments: [
    {
      name: 'fastpass-a',
      description:
        'Fastpass §7.1 experiment A: the scenario with Fastpass and with its baseline (scheme.kind=ecmp); the bottleneck queue and the throughput side by side',
      scenario: 'examples/fastpass.yaml',
      seeds: 5,
      module: new URL('./experiments.js', import.meta.url).href,
      run: 'runExperimentA',
    },
    {
      name: 'fastpass-c',
      description:
        "Fastpass §7.2 experiment C: the scenario with Fastpass and with its baseline; the senders' throughput standard deviation by how many are active",
      scenario: 'examples/fastpass-fairness.yaml',
      seeds: 5,
      module: new URL('./experiments.js', import.meta.url).href,
      run: 'runExperimentC',
    },
    {
      name: 'fastpass-clocks',
      description:
        "Fastpass experiment A (§7.1) on the clocks it runs on: ideal, PTP with hardware stamps and no transparent clocks (the deployment), with the hosts' send lateness, and with software stamps: the bottleneck queue and late timeslots",
      scenario: 'examples/fastpass.yaml',
      seeds: 5,
      module: new URL('./experiments.js', import.meta.url).href,
      run: 'runClocks',
    },
  ],

  timing: {
    scenario: 'examples/fastpass.yaml',
    quick: ['workload.duration=4ms'],
    guarantee:
      'near-zero queues: every host sends only in its own timeslots, so a queue grows only where clock error makes two timeslots overlap (§2, §7.1)',
    figures: [
      {
        id: 'queue_p99_kb',
        label: 'bottleneck queue p99',
        unit: 'KB',
        digits: 1,
        value: (_, run) => (run.queues.busiest?.p99Bytes ?? 0) / 1000,
      },
      { id: 'late', label: 'late timeslots', unit: 'timeslots', digits: 0, value: (f) => f.timeslots.late },
      // a late timeslot goes unused: what it costs in throughput
      { id: 'gbps', label: 'throughput', unit: 'Gbit/s', digits: 2, value: (_, run) => run.throughput.gbps },
    ],
  },

  failedFlows: (_s, r) => fastpassRejectedFlows(r),

  summaryKey: 'fastpass',
  summarize: (s, r, totals) => summarizeFastpass(s, r, totals),

  invariants(f): Array<{ invariant: string; detail: string }> {
    return f.qdiscDrops > 0
      ? [{ invariant: 'fastpass-no-qdisc-drop', detail: `${f.qdiscDrops} packets dropped by a full qdisc` }]
      : [];
  },

  reportRows: fastpassRows,

  sweepFigures(f) {
    return {
      fastpass_queue_p50_bytes: f.queue?.p50Bytes ?? null,
      fastpass_queue_p99_bytes: f.queue?.p99Bytes ?? null,
      fastpass_queue_p999_bytes: f.queue?.p999Bytes ?? null,
      fastpass_late: f.timeslots.late,
      fastpass_alloc_latency_p99_ns: f.allocationLatency.p99Ns,
      fastpass_fcp_overhead: f.fcp.overhead,
      // message mode: what a load sweep reads (a rejected message fails its load)
      ...(f.messages && {
        fastpass_messages_rejected: f.messages.rejected,
        fastpass_message_latency_mean_ns: f.messages.delays.latency.meanNs,
        fastpass_message_wait_mean_ns: f.messages.delays.hostWait.meanNs,
      }),
    };
  },
});
