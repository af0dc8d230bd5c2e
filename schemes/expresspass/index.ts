import {
  defineScheme,
  formatNs,
  type SchemeNodeConfig,
  type Topology,
  type TopoNode,
} from '../../sdk/index.js';
import { expressPassProperties, resolveXp, tokenThresholds, type XpSettings } from './definition/settings.js';
import { summarizeXp, type XpSummary } from './definition/summary.js';
import { VARIANTS } from './definition/variants.js';
import { CREDIT_BYTES, EXPRESSPASS_KIND, TOP_KIND, type XpHostConfig } from './wire.js';

export default defineScheme<XpSettings, XpSummary>({
  kinds: [EXPRESSPASS_KIND, TOP_KIND],
  parts: 'dcemu/schemes/expresspass/parts',
  properties: expressPassProperties,
  resolve: (src, topo, kind) => resolveXp(src, topo, kind),

  nodeScheme(s: XpSettings, topo: Topology, node: TopoNode): SchemeNodeConfig | undefined {
    if (node.role === 'switch') return { kind: s.kind, config: s.switch };
    if (node.role !== 'host') return undefined;
    const link = topo.links[node.ports[0].link];
    const top = s.host.top;
    const config: XpHostConfig = {
      ...s.host,
      ...(top &&
        s.expiry && {
          top: {
            ...top,
            expiryByPeerNs: tokenThresholds(topo, node, s.switch.creditShare, s.switch.queueCredits),
          },
        }),
      // a NIC limits its credits as a switch port does; tokens are born there, nothing expires
      nic: { ...s.switch, maxSojournNs: 0, unscheduledClass: undefined },
      maxCreditsPerS: (link.rateBps * s.switch.creditShare) / (8 * CREDIT_BYTES),
    };
    return { kind: s.kind, config };
  },

  timing: {
    scenario: 'examples/top-dumbbell.yaml',
    quick: ['workload.sizes=imc10', 'workload.duration=2ms', 'workload.load=0.6', 'run.drain=2ms'],
    guarantee:
      "TOP's token expiry (§4.3): a sender drops a token older than the threshold by its own clock against the receiver's stamp, so clock error drops valid tokens and lets stale ones through",
    figures: [
      {
        id: 'expired_valid',
        label: 'valid tokens dropped as expired',
        unit: 'tokens',
        digits: 0,
        value: (x) => x.tokens?.expiredValid ?? 0,
      },
      {
        id: 'stale_used',
        label: 'stale tokens used',
        unit: 'tokens',
        digits: 0,
        value: (x) => x.tokens?.staleUsed ?? 0,
      },
    ],
  },

  summaryKey: 'expresspass',
  summarize: (s, r) => summarizeXp(s, r),

  experiments: [
    {
      name: 'top-ablation',
      description:
        "TOP §3.3: where TOP's gain over ExpressPass comes from: ExpressPass, ExpressPass at TOP's start rate, TOP with one token class, TOP, TOP with §3.2's ideal switch (every token ranked by packets left), on the same trace (average FCT and slowdown, without and with the handshake in the ideal FCT, against ExpressPass); then TOP against ExpressPass again on PTP-disciplined clocks with late sends",
      scenario: 'examples/top-dumbbell.yaml',
      seeds: 5,
      module: new URL('./experiments.js', import.meta.url).href,
      run: 'runAblation',
      variants: VARIANTS.map((v) => v.name),
    },
  ],

  /** ExpressPass's promise: no data frame dropped by a full buffer, whatever fails (credits are dropped instead) */
  invariants(x) {
    return x.data.droppedCongestion > 0
      ? [
          {
            invariant: 'expresspass-no-congestion-loss',
            detail: `${x.data.droppedCongestion} data frames dropped by a full buffer`,
          },
        ]
      : [];
  },

  reportRows(x): Array<[string, string]> {
    const t = x.tokens;
    return [
      ...(t
        ? ([
            [
              'top tokens',
              `${t.expiredAtSenders} expired at senders (${t.expiredValid} of them valid, ${t.staleUsed} stale ones used; clock error up to ${formatNs(t.maxClockErrNs)}), ${t.expiredAtSwitches} at switches; by ${t.objective === 'deadline' ? 'deadline' : 'packets left'}; ${t.lossSignals.sent} loss signals, ${t.lossSignals.resent} resent`,
            ],
          ] as Array<[string, string]>)
        : []),
      ...(x.unscheduled
        ? ([
            [
              'top unscheduled',
              `${x.unscheduled.sent} packets sent unscheduled, ${x.unscheduled.dropped} dropped`,
            ],
          ] as Array<[string, string]>)
        : []),
      [
        `${x.scheme} credits`,
        `${x.credits.sent} sent, ${x.credits.droppedAtSwitches} dropped at switches (queue max ${x.maxCreditQueue}), ${x.credits.wasted} wasted; loss per flow mean ${(100 * x.creditLoss.mean).toFixed(1)}%, ${x.rateUpdates} rate updates`,
      ],
      [
        `${x.scheme} data`,
        `${x.data.sent} sent, ${x.data.received} received, ${x.data.droppedCongestion} dropped by full buffers, ${x.data.retransmits} retransmitted; largest switch queue ${x.maxQueueBytes} B at ${x.maxQueuePort || '-'} (bound ${x.queueBoundBytes} B)`,
      ],
      [
        `${x.scheme} FCT`,
        `avg ${formatNs(x.fct.avgNs)} p99 ${formatNs(x.fct.p99Ns)}; < 100 KB avg ${formatNs(x.fct.small.avgNs)} (${x.fct.small.count}); slowdown avg ${x.slowdown.avg} p99 ${x.slowdown.p99}; with the ${formatNs(x.handshakeNs)} handshake in the ideal (TOP §3.3 footnote 1) avg ${x.slowdownHandshake.avg} p99 ${x.slowdownHandshake.p99}`,
      ],
    ];
  },

  sweepFigures(x) {
    return {
      expresspass_data_dropped: x.data.droppedCongestion,
      expresspass_credits_dropped: x.credits.droppedAtSwitches,
      expresspass_fct_avg_ns: x.fct.avgNs,
      expresspass_slowdown_avg: x.slowdown.avg,
    };
  },
});
