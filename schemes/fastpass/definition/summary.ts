/**
 * `summary.fastpass`: what Fastpass is judged on (SIGCOMM'14 §7). From the arbiters: timeslots
 * allocated and how fast, takeovers and the spines fault isolation took out. From the hosts' qdiscs:
 * timeslots used, unused and late, allocation latency (a timeslot request until its allocation
 * arrived), FCP's own bytes against the bytes sent in timeslots, lost allocations, resets. The queue is
 * the busiest switch port's (the bottleneck of experiment A), sampled every `run.sample`. Per
 * takeover: when the primary died (the timeline's kill, pause or stop of arb0 — or of the primary of
 * the term before), when the secondary took over, sent its first allocation, and when the first
 * packet left in one of its timeslots.
 */

import {
  type BusiestQueue,
  busiestQueue,
  formatNs,
  Histogram,
  type MessageDelays,
  messageDelays,
  OUTAGES,
  type RunRecord,
  type SummaryTotals,
  sectionsOf,
  sum,
} from '../../../sdk/index.js';
import { BATCH } from '../arbiter/allocator.js';
import type { FastpassArbiterSection } from '../arbiter/role.js';
import type { MessageHostSection } from '../host/messages.js';
import type { FastpassHostSection } from '../host/qdisc.js';
import type { FastpassSettings } from './settings.js';

export interface FastpassFailover {
  /** the arbiter that took over, and its term */
  arbiter: string;
  term: number;
  /** the fault that took the primary out (virtual ns since traffic start), if the timeline had one */
  primaryDownAt: number | null;
  takeoverAt: number;
  firstAllocationAt: number | null;
  firstPacketAt: number | null;
  /** from the primary going down: to the takeover (detection), to the first allocation, to the first packet */
  detectionNs: number | null;
  toFirstAllocationNs: number | null;
  toFirstPacketNs: number | null;
  /** data packets lost in the fabric from the primary going down to the first packet after (as their receivers judged their resends) */
  packetsLost: number;
}

declare module '../../../sdk/index.js' {
  /** `summary.fastpass` */
  interface SchemeSections {
    fastpass: FastpassSummary;
  }
}

export interface FastpassSummary {
  policy: string;
  slotNs: number;
  horizonNs: number;
  arbiters: number;
  timeslots: {
    allocated: number;
    /** allocated timeslots per second of allocating */
    perSecond: number;
    received: number;
    used: number;
    unused: number;
    late: number;
    /** used / received */
    utilization: number;
  };
  allocationLatency: { p50Ns: number; p99Ns: number; maxNs: number };
  /** FCP's own bytes (requests from hosts, allocations and acknowledgements from arbiters) against the bytes sent in timeslots */
  fcp: { bytes: number; fromHosts: number; fromArbiters: number; payloadBytes: number; overhead: number };
  allocationsLost: number;
  resets: number;
  qdiscDrops: number;
  retransmitted: number;
  queuedAtEnd: number;
  queue: BusiestQueue | null;
  failovers: FastpassFailover[];
  /** a primary that came back to a higher term and stepped down (virtual ns since traffic start) */
  stepDowns: Array<{ arbiter: string; t: number }>;
  /** [virtual ns since traffic start, arbiter, spine, isolated] */
  isolation: Array<{ t: number; arbiter: string; spine: number; isolated: boolean }>;
  fabricDrops: number;
  /**
   * message mode (Harmony's footnote 3): messages asked for and rejected after the admission delay
   * (`rejected` counts those by the paper's definition: each fails its load), timeslots reached late,
   * and where their delay went
   */
  messages?: {
    submitted: number;
    rejected: number;
    late: number;
    admissionNs: number;
    delays: MessageDelays;
  };
}

type HostSection = FastpassHostSection & { messages?: MessageHostSection };

/** message mode's figures from the hosts' message sections */
function summarizeMessages(
  s: FastpassSettings,
  r: RunRecord,
  hosts: ReadonlyArray<{ messages?: MessageHostSection }>,
): FastpassSummary['messages'] {
  if (s.messages === undefined) return undefined;
  const m = hosts.flatMap((h) => (h.messages ? [h.messages] : []));
  return {
    submitted: sum(m, (x) => x.submitted),
    rejected: sum(m, (x) => x.rejected.length),
    late: sum(m, (x) => x.late),
    admissionNs: s.messages.admissionNs,
    delays: messageDelays(
      r.reports,
      new Map(m.flatMap((x) => x.firstSent)),
      new Map(m.flatMap((x) => x.queueing)),
    ),
  };
}

/** Messages the arbiter rejected after their admission delay, with the reason, for the flow outcomes. */
export function fastpassRejectedFlows(r: RunRecord): Map<number, string> {
  const out = new Map<number, string>();
  for (const { section: h } of sectionsOf<HostSection>(r, 'host')) {
    if (h.messages === undefined) continue;
    for (const id of h.messages.rejected)
      out.set(id, 'fastpass rejected it (not allocated within the admission delay)');
  }
  return out;
}

export function summarizeFastpass(s: FastpassSettings, r: RunRecord, totals: SummaryTotals): FastpassSummary {
  const hosts = sectionsOf<HostSection>(r, 'host').map((x) => x.section);
  const arbs = sectionsOf<FastpassArbiterSection>(r, 'arbiter').map((x) => ({
    name: x.report.name,
    a: x.section,
  }));
  arbs.sort((x, y) => x.a.rank - y.a.rank);
  const t0 = r.trafficStart;
  // physical report times, as whole ns since the traffic start
  const since0 = (t: number) => Math.round(t - t0);
  const latency = new Histogram();
  for (const h of hosts) latency.merge(h.allocationLatency);
  const allocated = sum(arbs, (x) => x.a.timeslots);
  const allocNs = sum(arbs, (x) => x.a.batches) * BATCH * s.slotNs;
  const received = sum(hosts, (h) => h.timeslotsAllocated);
  // message mode's packets are sent beside the qdisc's
  const used = sum(hosts, (h) => h.timeslotsUsed + (h.messages?.used ?? 0));
  const fromHosts = sum(hosts, (h) => h.fcpBytesOut);
  const fromArbiters = sum(arbs, (x) => x.a.fcpBytesOut);
  const fcpBytes = fromHosts + fromArbiters;
  const payloadBytes = sum(hosts, (h) => h.payloadBytes + (h.messages?.bytes ?? 0));

  const failovers = failoversOf(s, r, arbs, hosts, since0);
  const stepDowns = arbs.flatMap(({ name, a }) =>
    a.steppedDown.map((t) => ({ arbiter: name, t: since0(t) })),
  );
  const isolation = arbs.flatMap(({ name, a }) =>
    a.isolation.map(([t, spine, on]) => ({ t: since0(t), arbiter: name, spine, isolated: on === 1 })),
  );
  return {
    policy: s.policy,
    slotNs: s.slotNs,
    horizonNs: s.horizonNs,
    arbiters: s.arbiters,
    timeslots: {
      allocated,
      perSecond: allocNs > 0 ? Math.round((allocated * 1e9) / allocNs) : 0,
      received,
      used,
      unused: sum(hosts, (h) => h.timeslotsUnused),
      late: sum(hosts, (h) => h.late),
      utilization: received > 0 ? Math.round((used / received) * 10000) / 10000 : 0,
    },
    allocationLatency: {
      p50Ns: latency.quantile(0.5),
      p99Ns: latency.quantile(0.99),
      maxNs: latency.max,
    },
    fcp: {
      bytes: fcpBytes,
      fromHosts,
      fromArbiters,
      payloadBytes,
      overhead:
        fcpBytes + payloadBytes > 0 ? Math.round((fcpBytes / (fcpBytes + payloadBytes)) * 1e5) / 1e5 : 0,
    },
    allocationsLost: sum(hosts, (h) => h.allocationsLost),
    resets: sum(hosts, (h) => h.resets),
    qdiscDrops: sum(hosts, (h) => h.dropped),
    retransmitted: sum(hosts, (h) => h.retransmitted),
    queuedAtEnd: sum(hosts, (h) => h.queued),
    queue: busiestQueue(r.reports),
    failovers,
    stepDowns,
    isolation,
    fabricDrops: totals.congestionDrops,
    ...(s.messages && { messages: summarizeMessages(s, r, hosts) }),
  };
}

/** Each takeover of a primary arbiter: when the one before went down, and how soon allocations and packets came again. */
function failoversOf(
  s: FastpassSettings,
  r: RunRecord,
  arbs: Array<{ name: string; a: FastpassArbiterSection }>,
  hosts: HostSection[],
  since0: (t: number) => number,
): FastpassFailover[] {
  // takeovers: every primary term after the first; the primary before went down at the latest outage
  // of an arbiter before the takeover
  // arbiters are arb0, arb1, ... (a killed one leaves no report, so its name comes from the settings)
  const arbNames = new Set(Array.from({ length: s.arbiters }, (_, i) => `arb${i}`));
  const outages = r.faults.filter((f) => OUTAGES.has(f.action) && arbNames.has(f.node ?? ''));
  const failovers: FastpassFailover[] = [];
  for (const { name, a } of arbs) {
    a.primaryFrom.forEach(([t, term], i) => {
      if (term === 0) return;
      const at = since0(t);
      const down = outages.filter((f) => f.t <= at && f.node !== name).at(-1)?.t ?? null;
      const alloc = (a.firstAlloc[i] ?? -1) >= 0 ? since0(a.firstAlloc[i]) : null;
      let packet: number | null = null;
      for (const h of hosts)
        h.sessions.forEach(([, , tm], j) => {
          const sent = h.firstSend[j];
          if (tm === term && sent >= 0 && (packet === null || since0(sent) < packet)) packet = since0(sent);
        });
      const since = (v: number | null) => (v === null || down === null ? null : Math.round(v - down));
      const until = packet ?? at;
      const packetsLost = sum(
        hosts,
        (h) => h.dataLost.filter((t) => since0(t) >= (down ?? at) && since0(t) <= until).length,
      );
      failovers.push({
        arbiter: name,
        term,
        primaryDownAt: down,
        takeoverAt: at,
        firstAllocationAt: alloc,
        firstPacketAt: packet,
        detectionNs: since(at),
        toFirstAllocationNs: since(alloc),
        toFirstPacketNs: since(packet),
        packetsLost,
      });
    });
  }
  return failovers;
}

export function fastpassRows(f: FastpassSummary): Array<[string, string]> {
  const ts = f.timeslots;
  const kb = (b: number) => `${(b / 1000).toFixed(1)} KB`;
  const rows: Array<[string, string]> = [
    [
      'fastpass timeslots',
      `${ts.allocated} allocated (${(ts.perSecond / 1e6).toFixed(3)} M/s), ${ts.used} used, ${ts.unused} unused, ${ts.late} late; utilization ${(ts.utilization * 100).toFixed(2)}%`,
    ],
    [
      'fastpass allocation latency',
      `p50 ${formatNs(f.allocationLatency.p50Ns)}, p99 ${formatNs(f.allocationLatency.p99Ns)} (horizon ${formatNs(f.horizonNs)})`,
    ],
    [
      'fastpass FCP',
      `${(f.fcp.overhead * 100).toFixed(3)}% of bytes; ${f.allocationsLost} allocations lost, ${f.resets} resets, ${f.retransmitted} packets sent again`,
    ],
  ];
  if (f.queue)
    rows.push([
      `fastpass queue ${f.queue.port}`,
      `p50 ${kb(f.queue.p50Bytes)}, p90 ${kb(f.queue.p90Bytes)}, p99 ${kb(f.queue.p99Bytes)}, p99.9 ${kb(f.queue.p999Bytes)}`,
    ]);
  const m = f.messages;
  if (m)
    rows.push([
      'fastpass messages',
      `${m.submitted} asked, ${m.rejected} rejected at the admission delay${m.admissionNs > 0 ? ` ${formatNs(m.admissionNs)}` : ' (none)'}, ${m.late} late timeslots; latency mean ${formatNs(m.delays.latency.meanNs)} p99 ${formatNs(m.delays.latency.p99Ns)}, host wait mean ${formatNs(m.delays.hostWait.meanNs)}, queueing mean ${formatNs(m.delays.queueing.meanNs)}`,
    ]);
  for (const fo of f.failovers) {
    const d = (v: number | null) => (v === null ? '-' : formatNs(v));
    rows.push([
      `fastpass takeover ${fo.arbiter} (term ${fo.term})`,
      `detected +${d(fo.detectionNs)}, first allocation +${d(fo.toFirstAllocationNs)}, first packet +${d(fo.toFirstPacketNs)} after the primary went down; ${fo.packetsLost} packets lost`,
    ]);
  }
  for (const sd of f.stepDowns)
    rows.push([`fastpass step-down ${sd.arbiter}`, `heard a newer primary at ${formatNs(sd.t)}`]);
  for (const i of f.isolation)
    rows.push([
      `fastpass isolation (${i.arbiter})`,
      `spine${i.spine} ${i.isolated ? 'isolated' : 'restored'} at ${formatNs(i.t)}`,
    ]);
  return rows;
}
