/**
 * Harmony (NSDI'24) as the orchestrator sees it: settings and Theorem 3.1 bounds from the topology,
 * each switch's and host's config, `summary.harmony` with its report lines, and the promise chaos
 * runs check: no data frame finds more than the bound queued and no Harmony frame is dropped by a full
 * buffer, whatever fails.
 */
import { defineScheme, type SchemeNodeConfig, type Topology, type TopoNode } from '../../sdk/index.js';
import { type HarmonySettings, harmonyProperties, resolveHarmony } from './definition/settings.js';
import {
  type HarmonySummary,
  harmonyFailedFlows,
  harmonyRows,
  summarizeHarmony,
} from './definition/summary.js';
import { HARMONY_KIND, type HarmonyHostConfig, type HarmonySwitchConfig } from './wire.js';

export default defineScheme<HarmonySettings, HarmonySummary>({
  kinds: [HARMONY_KIND],
  parts: 'dcemu/schemes/harmony/parts',
  properties: harmonyProperties,
  resolve: (src, topo) => resolveHarmony(src, topo),

  nodeScheme(s: HarmonySettings, _topo: Topology, node: TopoNode): SchemeNodeConfig | undefined {
    const b = s.bounds;
    const mtuNs = (8e9 * 1500) / b.minRateBps;
    if (node.role === 'switch') {
      const config: HarmonySwitchConfig = {
        K: s.K,
        // the first byte of a grant passes within two one-way bounds of its rsvp, the next ones a
        // slot's pacing gap apart; one more bound of slack
        holdNs: Math.ceil(3 * b.oneWayNs + s.K * mtuNs),
        queueBoundBytes: b.queueBoundBytes,
        controlShare: s.controlShare,
      };
      return { kind: HARMONY_KIND, config };
    }
    if (node.role === 'host') {
      const config: HarmonyHostConfig = {
        K: s.K,
        deltaAdmissionNs: s.deltaAdmissionNs,
        multiSlot: s.multiSlot,
        slotRateBps: (b.hostRateBps * (1 - s.controlShare)) / s.K,
        bdpBytes: b.bdpBytes,
        oneWayNs: Math.ceil(b.oneWayNs),
        jitterNs: Math.ceil(b.delayBoundNs + (b.switchesOnPath + s.K) * mtuNs),
        onReject: s.onReject,
        rejectAfter: s.rejectAfter,
        retries: s.retries,
      };
      return { kind: HARMONY_KIND, config };
    }
    return undefined;
  },

  failedFlows: (_s, r) => harmonyFailedFlows(r),

  timing: {
    scenario: 'examples/harmony.yaml',
    // the testbed's 8 servers (2 leaves of 4), 0.5 ms of arrivals: 128 KB messages at B/K in flight
    // over the whole run (the clocks' figures need no longer: Harmony's hold on every discipline)
    quick: ['topology.leaves=2', 'workload.duration=0.5ms', 'run.drain=2ms'],
    guarantee:
      "Theorem 3.1's queue bound: every sender paces its slot at B/K on its own clock, so a queue exceeds the bound only where pacing drifts; a receiver infers a failure (the message fails) from an arrival its own clock says is overdue. Both measure intervals on one clock: offsets between hosts do not reach them, steps do",
    figures: [
      {
        id: 'bound_violations',
        label: 'data frames that found their queue above the Theorem 3.1 bound',
        unit: 'frames',
        digits: 0,
        value: (h) => h.boundViolations,
      },
      {
        id: 'max_queue_kb',
        label: 'largest data queue',
        unit: 'KB',
        digits: 1,
        value: (h) => h.maxQueueBytes / 1000,
      },
      {
        id: 'failed',
        label: 'messages failed',
        unit: 'messages',
        digits: 0,
        value: (h) => h.messages.failed,
      },
    ],
  },

  experiments: [
    {
      name: 'harmony-load',
      description:
        'Harmony §5.1 (Fig. 5d): the maximum sustainable load of 128 KB RPCs over a load sweep to 0.99 on the same arrivals, under both readings of a reject (A: asked again within δadmission, the headline; B: the first reject final), and the slowdown over each message’s unloaded completion time',
      scenario: 'examples/harmony.yaml',
      // 3, not 5: the sweep grew to 9 loads (up to 0.99) and a calibration run
      seeds: 3,
      module: new URL('./experiments/index.js', import.meta.url).href,
      run: 'runLoad',
    },
    {
      name: 'harmony-sizes',
      description:
        'Harmony §5.1 Fig. 5d: the maximum sustainable load by RPC size (8, 32 and 128 KB; the paper: 0.65 at 8 KB, 0.9 at 128 KB) at one delay bound, §5’s workload, under both readings of a reject',
      scenario: 'examples/harmony.yaml',
      seeds: 3,
      module: new URL('./experiments/index.js', import.meta.url).href,
      run: 'runSizes',
    },
    {
      name: 'harmony-fig5b',
      description:
        'Harmony §5.1 Fig. 5b: the feasibility region over K × δadmission at the testbed’s scale (8 servers, 10 Gbit/s): each point’s maximum sustainable load under both readings of a reject and the worst-case delay observed there, and the Pareto fronts, every point on the same arrivals',
      scenario: 'examples/harmony.yaml',
      seeds: 3,
      module: new URL('./experiments/feasibility.js', import.meta.url).href,
      run: 'runFig5b',
    },
    {
      name: 'harmony-fig6',
      description:
        'Harmony §5.2 Fig. 6 against Fastpass extended to messages (footnote 3) at 100 Gbit/s on the same fabric, arrivals (one trace per seed and load for every point) and seed: both feasibility regions over K × δadmission (Harmony under both readings of a reject, Fastpass with each horizon), the slowdown spread at a load both sustain with every message counted, and the wait at the sender against switch queueing',
      scenario: 'examples/harmony.yaml',
      seeds: 3,
      module: new URL('./experiments/fig6.js', import.meta.url).href,
      run: 'runFig6',
    },
    {
      name: 'harmony-fig7',
      description:
        'Harmony §5.2 Fig. 7: 128 KB RPCs at 0.3–0.5 beside web-search best-effort flows at 0.3–0.1, against the baseline’s DCTCP carrying both (the paper’s HPCC and dcPIM are not in dcemu) on the same arrivals: RPC slowdown spread and best-effort mean/p99 slowdown, every flow counted',
      scenario: 'examples/harmony.yaml',
      seeds: 3,
      module: new URL('./experiments/fig7.js', import.meta.url).href,
      run: 'runFig7',
    },
  ],

  summaryKey: 'harmony',
  summarize: (s, r) => summarizeHarmony(s, r),

  invariants(h): Array<{ invariant: string; detail: string }> {
    const broken: Array<{ invariant: string; detail: string }> = [];
    if (h.boundViolations > 0)
      broken.push({
        invariant: 'harmony-queue-bound',
        detail: `${h.boundViolations} data frames found more than ${h.queueBoundBytes} B queued (max ${h.maxQueueBytes} B)`,
      });
    if (h.congestionDrops > 0)
      broken.push({
        invariant: 'harmony-no-congestion-drop',
        detail: `${h.congestionDrops} Harmony frames dropped by a full buffer`,
      });
    return broken;
  },

  reportRows: harmonyRows,

  /** what a load sweep reads: the maximum sustainable load is the highest with no message rejected */
  sweepFigures(h) {
    return {
      harmony_rejected: h.messages.rejected,
      harmony_failed: h.messages.failed,
      harmony_retried: h.messages.retried,
      harmony_rejected_at_host: h.allocation.rejectedAtHost,
      harmony_through_network: Math.round(h.allocation.notRejectedInNetwork * 1000) / 1000,
      harmony_max_queue_bytes: h.maxQueueBytes,
      harmony_bound_violations: h.boundViolations,
      harmony_slowdown_p99: Math.round(h.slowdown.p99 * 1000) / 1000,
      harmony_message_latency_mean_ns: h.delays.latency.meanNs,
      harmony_message_wait_mean_ns: h.delays.hostWait.meanNs,
    };
  },
});
