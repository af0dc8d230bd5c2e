/**
 * `summary.harmony`: what the guarantee is judged on (NSDI'24 §3.3, §5). The queue figures come from
 * the switches: the data-class bytes every Harmony data frame found waiting on its egress port, how
 * many found more than the Theorem 3.1 bound, Harmony frames a full buffer dropped. Messages, their
 * outcomes and the failures hosts inferred come from the hosts (sender side: the outcome; receiver
 * side: the worst network queueing a message's frames met). Slowdown is a completed message's FCT over
 * the unloaded line-rate FCT on its path (as `slowdown` in flows.csv). Per timeline fault: when the
 * first failure was inferred after it, and when the messages that failed after it were done (complete
 * after a retry, or handed to best effort).
 */
import {
  formatNs,
  idealFct,
  type MessageDelays,
  messageDelays,
  quantile,
  type RunRecord,
  sectionsOf,
  sum,
} from '../../../sdk/index.js';
import type { HarmonyHostSection } from '../host/state.js';
import { Outcome } from '../host/state.js';
import type { HarmonySwitchSection } from '../switch/module.js';
import { FailureWhy, RejectWhy } from '../wire.js';
import type { HarmonySettings } from './settings.js';

export interface HarmonyFaultSummary {
  action: string;
  target: string;
  /** virtual ns since traffic start */
  t: number;
  /** messages a failure was inferred for after it (before the next fault) */
  messages: number;
  /** from the fault to the first inferred failure, ns */
  firstFailureNs: number | null;
  /** from the fault to the last of those messages done (complete, or handed to best effort), ns */
  recoveredNs: number | null;
  /** of those, still open at the end */
  unresolved: number;
}

declare module '../../../sdk/index.js' {
  /** `summary.harmony` */
  interface SchemeSections {
    harmony: HarmonySummary;
  }
}

/** a slowdown's spread, as the paper's box plots show it (§5: min, mean, p99, p99.9, max) and p50 */
export interface Spread {
  min: number;
  mean: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

export interface HarmonySummary {
  K: number;
  deltaAdmissionNs: number;
  switchesOnPath: number;
  queueBoundBytes: number;
  maxQueueBytes: number;
  boundViolations: number;
  congestionDrops: number;
  /** second-class control frames the switches' reserve (controlShare) sent ahead of waiting data */
  controlLent: number;
  delayBoundNs: number;
  maxQueueingDelayNs: number;
  /**
   * the hosts' message counts, summed (completed: with those delivered whole whose verdict was still on
   * its way back when the run ended), and those still in progress when it ended
   */
  messages: Pick<
    HarmonyHostSection,
    'submitted' | 'completed' | 'rejected' | 'failed' | 'retried' | 'bestEffort'
  > & {
    open: number;
    /** in progress at a sender the timeline killed or stopped: they ended with it */
    senderHalted: number;
  };
  /** messages completed through Harmony (the paper's figure) */
  slowdown: Spread;
  /**
   * every message that completed, through Harmony or best effort after its asks (`onReject:
   * best-effort`), and those fallbacks alone: what the application saw
   */
  slowdownAll: Spread & { messages: number };
  slowdownFallback: Spread & { messages: number };
  /** where the delay of the messages completed through Harmony went (Fig. 6b/6c) */
  delays: MessageDelays;
  allocation: {
    rsvpSent: number;
    rejectedInNetwork: number;
    rejectedAtHost: number;
    rejectedBySender: number;
    extraGrants: number;
    /** extra grants taken back for a new message: by senders, receivers and switches */
    revoked: number;
    /** VLs reclaimed by the switches' soft-state timeout */
    reclaimed: number;
    /** fraction of rsvps not rejected in the network (Theorem 3.2's measure) */
    notRejectedInNetwork: number;
  };
  /**
   * messages whose final ask was rejected (given up or sent best effort), by the reject that ended it:
   * no free sender slot, no virtual link (and at which switch), the receiver's slots (δadmission)
   */
  rejects: { senderSlot: number; network: number; receiver: number; bySwitch: Record<string, number> };
  /** failures inferred by hosts, by why */
  inferred: { silent: number; incomplete: number; noAnswer: number; noComplete: number };
  /** longest a receiver took to infer a failure after the first data frame that did not come was due, ns */
  maxInferenceNs: number;
  faults: HarmonyFaultSummary[];
}

export function summarizeHarmony(s: HarmonySettings, r: RunRecord): HarmonySummary {
  const hostSections = sectionsOf<HarmonyHostSection>(r, 'host');
  const hosts = hostSections.map((x) => x.section);
  const switches = sectionsOf<HarmonySwitchSection>(r, 'switch').map((x) => x.section);
  const b = s.bounds;

  // sender starts and sizes, receiver finishes: FCT of every message that completed through Harmony
  const { start, finish } = startsAndFinishes(r);
  // a message delivered whole whose verdict was still on its way back to the sender when the run
  // ended (runs end when every flow is delivered) is complete: the receiver's finish is its FCT
  const { verdictPending, outcomes } = verdicts(hostSections, hosts, finish);
  const { slowdowns, fallbacks } = slowdownsOf(hosts, outcomes, start, finish, b);
  const all = [...slowdowns, ...fallbacks];
  const throughHarmony = new Set<number>();
  for (const h of hosts)
    for (const [id, outcome] of outcomes(h)) if (outcome === Outcome.Complete) throughHarmony.add(id);
  const delays = messageDelays(
    r.reports,
    new Map(hosts.flatMap((h) => h.firstSent)),
    new Map(hosts.flatMap((h) => h.queueing)),
    (id) => throughHarmony.has(id),
  );

  const failures = hosts.flatMap((h) => h.failures).sort((x, y) => x[0] - y[0]);
  const { ends, open, senderHalted } = endsOf(hostSections, outcomes, finish, verdictPending);
  const rsvpSent = sum(hosts, (h) => h.rsvpSent);
  const rejectedInNetwork = sum(switches, (x) => x.rejectedInNetwork);
  const why = (w: number) => failures.filter((f) => f[2] === w).length;
  const names = new Map(r.scenario.topology.nodes.map((n) => [n.id, n.name]));
  const rejects = rejectsOf(hosts, names);

  const faults = faultsOf(r, failures, ends, open);

  return {
    K: s.K,
    deltaAdmissionNs: s.deltaAdmissionNs,
    switchesOnPath: b.switchesOnPath,
    queueBoundBytes: b.queueBoundBytes,
    maxQueueBytes: Math.max(0, ...switches.map((x) => x.maxQueueBytes)),
    boundViolations: sum(switches, (x) => x.boundViolations),
    congestionDrops: sum(switches, (x) => x.congestionDrops),
    controlLent: sum(switches, (x) => x.controlLent),
    delayBoundNs: b.delayBoundNs,
    maxQueueingDelayNs: Math.max(0, ...hosts.flatMap((h) => h.queueing.map((q) => q[1]))),
    messages: {
      submitted: sum(hosts, (h) => h.submitted),
      completed: sum(hosts, (h) => h.completed) + verdictPending.size,
      rejected: sum(hosts, (h) => h.rejected),
      failed: sum(hosts, (h) => h.failed),
      retried: sum(hosts, (h) => h.retried),
      bestEffort: sum(hosts, (h) => h.bestEffort),
      open: open.size,
      senderHalted,
    },
    slowdown: spread(slowdowns),
    slowdownAll: { messages: all.length, ...spread(all) },
    slowdownFallback: { messages: fallbacks.length, ...spread(fallbacks) },
    delays,
    allocation: {
      rsvpSent,
      rejectedInNetwork,
      rejectedAtHost: sum(hosts, (h) => h.rejectedAtHost),
      rejectedBySender: sum(hosts, (h) => h.rejectedBySender),
      extraGrants: sum(hosts, (h) => h.extraGrants),
      revoked: sum(hosts, (h) => h.revoked) + sum(switches, (x) => x.revoked),
      reclaimed: sum(switches, (x) => x.reclaimed),
      notRejectedInNetwork: rsvpSent === 0 ? 1 : 1 - rejectedInNetwork / rsvpSent,
    },
    rejects,
    inferred: {
      silent: why(FailureWhy.Silent),
      incomplete: why(FailureWhy.Incomplete),
      noAnswer: why(FailureWhy.NoAnswer),
      noComplete: why(FailureWhy.NoComplete),
    },
    maxInferenceNs: Math.max(0, ...failures.filter((f) => f[3] >= 0).map((f) => f[0] - f[3])),
    faults,
  };
}

/** Every message's start and size (its sender's), and its finish (its receiver's). */
function startsAndFinishes(r: RunRecord): {
  start: Map<number, { start: number; size: number }>;
  finish: Map<number, number>;
} {
  const start = new Map<number, { start: number; size: number }>();
  const finish = new Map<number, number>();
  for (const rep of r.reports) {
    for (const f of rep.flows) start.set(f.id, { start: f.start, size: f.size });
    for (const [id, t] of rep.received) finish.set(id, t);
  }
  return { start, finish };
}

/**
 * The messages delivered whole whose verdict was still on its way back when the run ended, and each
 * host's outcomes with those as complete
 */
function verdicts(
  hostSections: Array<{ report: RunRecord['reports'][number]; section: HarmonyHostSection }>,
  hosts: HarmonyHostSection[],
  finish: Map<number, number>,
): {
  verdictPending: Set<number>;
  outcomes: (h: HarmonyHostSection) => HarmonyHostSection['outcomes'];
} {
  const verdictPending = new Set<number>();
  for (const { report: rep, section: h } of hostSections)
    if (rep.end !== 'halt') for (const [id] of h.open) if (finish.has(id)) verdictPending.add(id);
  // each host's outcomes, those delivered with their verdict pending as complete: built once, read thrice
  const outcomesOf = new Map(
    hosts.map((h) => [
      h,
      [
        ...h.outcomes,
        ...h.open
          .filter(([id]) => verdictPending.has(id))
          .map(
            ([id, attempts]) =>
              [id, Outcome.Complete, attempts, -1, -1, 0, -1] as HarmonyHostSection['outcomes'][0],
          ),
      ],
    ]),
  );
  const outcomes = (h: HarmonyHostSection) => outcomesOf.get(h) ?? h.outcomes;
  return { verdictPending, outcomes };
}

/** When each message ended, those still open, and those a killed sender never ended. */
function endsOf(
  hostSections: Array<{ report: RunRecord['reports'][number]; section: HarmonyHostSection }>,
  outcomes: (h: HarmonyHostSection) => HarmonyHostSection['outcomes'],
  finish: Map<number, number>,
  verdictPending: Set<number>,
): { ends: Map<number, number>; open: Set<number>; senderHalted: number } {
  const ends = new Map<number, number>();
  const open = new Set<number>();
  let senderHalted = 0;
  for (const { report: rep, section: h } of hostSections) {
    for (const [id, , , t] of outcomes(h)) ends.set(id, t >= 0 ? t : finish.get(id)!);
    // a sender killed mid-message reported what it had up to its death: those never end
    if (rep.end === 'halt') senderHalted += h.open.length;
    else for (const [id] of h.open) if (!verdictPending.has(id)) open.add(id);
  }
  return { ends, open, senderHalted };
}

/** The slowdown of every message delivered through Harmony, and of those that fell back to best effort. */
function slowdownsOf(
  hosts: HarmonyHostSection[],
  outcomes: (h: HarmonyHostSection) => HarmonyHostSection['outcomes'],
  start: Map<number, { start: number; size: number }>,
  finish: Map<number, number>,
  b: HarmonySettings['bounds'],
): { slowdowns: number[]; fallbacks: number[] } {
  const slowdowns: number[] = [];
  const fallbacks: number[] = [];
  for (const h of hosts)
    for (const [id, outcome, , , switchesOnPath] of outcomes(h)) {
      const st = start.get(id);
      const fin = finish.get(id);
      if (st === undefined || fin === undefined) continue;
      if (outcome !== Outcome.Complete && outcome !== Outcome.BestEffort) continue;
      const links = (switchesOnPath >= 0 ? switchesOnPath : b.switchesOnPath) + 1;
      const x = (fin - st.start) / idealFct(st.size, links, b.hostRateBps, b.maxPropNs);
      (outcome === Outcome.Complete ? slowdowns : fallbacks).push(x);
    }
  return { slowdowns, fallbacks };
}

/** Why messages were rejected, as their senders heard it: sender slot, network (by switch) or receiver. */
function rejectsOf(hosts: HarmonyHostSection[], names: Map<number, string>): HarmonySummary['rejects'] {
  const rejects = { senderSlot: 0, network: 0, receiver: 0, bySwitch: {} as Record<string, number> };
  for (const h of hosts)
    for (const [, outcome, , , , w, sw] of h.outcomes) {
      if (outcome !== Outcome.Rejected && outcome !== Outcome.BestEffort) continue;
      if (w === RejectWhy.SenderBusy) rejects.senderSlot++;
      else if (w === RejectWhy.Admission) rejects.receiver++;
      else if (w === RejectWhy.Network) {
        rejects.network++;
        const name = names.get(sw) ?? String(sw);
        rejects.bySwitch[name] = (rejects.bySwitch[name] ?? 0) + 1;
      }
    }
  return rejects;
}

/** Per fault of the timeline (not its repairs): the messages whose failures it caused, and how soon they ended. */
function faultsOf(
  r: RunRecord,
  failures: HarmonyHostSection['failures'],
  ends: Map<number, number>,
  open: Set<number>,
): HarmonyFaultSummary[] {
  return r.faults
    .filter((f) => !['resume', 'start', 'connect', 'link-up'].includes(f.action))
    .map((f, i, all): HarmonyFaultSummary => {
      const from = f.t + r.trafficStart;
      const to = i + 1 < all.length ? all[i + 1].t + r.trafficStart : Number.POSITIVE_INFINITY;
      const hit = failures.filter((x) => x[0] >= from && x[0] < to);
      const msgs = new Set(hit.map((x) => x[1]));
      let last: number | null = null;
      let unresolved = 0;
      for (const id of msgs) {
        const t = ends.get(id);
        if (t === undefined || open.has(id)) unresolved++;
        else if (last === null || t > last) last = t;
      }
      return {
        action: f.action,
        target: f.node ?? (f.link ? f.link.join('-') : '?'),
        t: f.t,
        messages: msgs.size,
        firstFailureNs: hit.length > 0 ? hit[0][0] - from : null,
        recoveredNs: last === null ? null : last - from,
        unresolved,
      };
    });
}

function spread(xs: number[]): Spread {
  const sorted = [...xs].sort((x, y) => x - y);
  return {
    min: sorted[0] ?? 0,
    mean: sorted.length === 0 ? 0 : sum(sorted, (x) => x) / sorted.length,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    p999: quantile(sorted, 0.999),
    max: sorted.at(-1) ?? 0,
  };
}

/** Messages Harmony itself ended (given up after their asks), with the reason, for the flow outcomes. */
export function harmonyFailedFlows(r: RunRecord): Map<number, string> {
  const failed = new Map<number, string>();
  for (const { section: h } of sectionsOf<HarmonyHostSection>(r, 'host')) {
    const last = new Map<number, number>();
    for (const [, id, why] of h.failures) last.set(id, why);
    for (const [id, outcome, attempts, , , w, sw] of h.outcomes) {
      const asks = `${attempts} ask${attempts === 1 ? '' : 's'}`;
      if (outcome === Outcome.Rejected)
        failed.set(id, `harmony rejected it (${asks}; the last: ${rejectWhy(w, sw, r)})`);
      else if (outcome === Outcome.Failed)
        failed.set(id, `harmony failed it (${asks}, the last: ${WHY[last.get(id) ?? 0] ?? 'failure'})`);
    }
  }
  return failed;
}

/** why a message's last ask was refused, in words */
function rejectWhy(w: number, sw: number, r: RunRecord): string {
  if (w === RejectWhy.SenderBusy) return 'no free sender slot';
  if (w === RejectWhy.Admission) return 'no receiver slot within δadmission';
  if (w === RejectWhy.Network)
    return `no free virtual link at ${r.scenario.topology.nodes.find((n) => n.id === sw)?.name ?? `switch ${sw}`}`;
  return 'refused';
}

const WHY: Record<number, string> = {
  [FailureWhy.Silent]: 'its data stopped coming',
  [FailureWhy.Incomplete]: 'bytes missing at its complete',
  [FailureWhy.NoAnswer]: 'its request went unanswered',
  [FailureWhy.NoComplete]: 'its complete went unanswered',
};

/** Lines for the printed summary table. */
export function harmonyRows(h: HarmonySummary): Array<[string, string]> {
  const m = h.messages;
  const a = h.allocation;
  const rows: Array<[string, string]> = [
    [
      'harmony queues',
      `max ${h.maxQueueBytes} B of bound ${h.queueBoundBytes} B (K ${h.K}, #H ${h.switchesOnPath}); ${h.boundViolations} over bound, ${h.congestionDrops} congestion drops; queueing max ${formatNs(h.maxQueueingDelayNs)} of bound ${formatNs(h.delayBoundNs)}`,
    ],
    [
      'harmony messages',
      `${m.completed}/${m.submitted} complete, ${m.rejected} rejected, ${m.failed} failed, ${m.retried} retried, ${m.bestEffort} best effort, ${m.open} open${m.senderHalted > 0 ? `, ${m.senderHalted} ended with their killed sender` : ''}; slowdown p50 ${h.slowdown.p50.toFixed(2)} p99 ${h.slowdown.p99.toFixed(2)} max ${h.slowdown.max.toFixed(2)}${h.slowdownFallback.messages > 0 ? `; with the ${h.slowdownFallback.messages} best-effort fallbacks p99 ${h.slowdownAll.p99.toFixed(2)} (theirs ${h.slowdownFallback.p99.toFixed(2)})` : ''}`,
    ],
    [
      'harmony allocation',
      `${a.rsvpSent} rsvps (${a.extraGrants} extra, ${a.revoked} taken back), ${a.rejectedInNetwork} rejected in network (${(100 * a.notRejectedInNetwork).toFixed(1)}% through), ${a.rejectedAtHost} at δadmission ${formatNs(h.deltaAdmissionNs)}, ${a.rejectedBySender} by senders, ${a.reclaimed} VLs reclaimed`,
    ],
  ];
  const j = h.rejects;
  if (j.senderSlot + j.network + j.receiver > 0)
    rows.push([
      'harmony rejects',
      `final: ${j.senderSlot} no sender slot, ${j.network} no virtual link${
        j.network > 0
          ? ` (${Object.entries(j.bySwitch)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')})`
          : ''
      }, ${j.receiver} no receiver slot within δadmission`,
    ]);
  const i = h.inferred;
  if (i.silent + i.incomplete + i.noAnswer + i.noComplete > 0)
    rows.push([
      'harmony failures inferred',
      `${i.silent} data silent (at most ${formatNs(h.maxInferenceNs)} after due), ${i.incomplete} incomplete, ${i.noAnswer} requests unanswered, ${i.noComplete} completes unanswered`,
    ]);
  for (const f of h.faults)
    rows.push([
      `harmony ${f.action} ${f.target}`,
      `${f.messages} messages failed after it; first failure inferred +${f.firstFailureNs === null ? '-' : formatNs(f.firstFailureNs)}, all done +${f.recoveredNs === null ? '-' : formatNs(f.recoveredNs)}${f.unresolved > 0 ? `, ${f.unresolved} unresolved` : ''}`,
    ]);
  return rows;
}
