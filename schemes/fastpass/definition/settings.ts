/**
 * Fastpass's `scheme:` settings (SIGCOMM'14) and the fabric the arbiter routes, derived from the
 * topology: racks under spines (a leaf-spine, or one switch) or in the pods of a FatTree, with the arbiters as servers on
 * ToR ports (§7: "One server is set aside for running the arbiter"). Defaults come from the paper:
 * 65 µs allocation horizon (§5.1), watchdog every 100 µs and takeover after 1 ms (§5.1), one secondary
 * ("Our current implementation uses only one secondary"), demands gathered over a few µs (§2).
 */

import {
  bytes,
  duration,
  parseBytes,
  pathFigures,
  portToward,
  type ScenarioSource,
  setting,
  type Topology,
  type TopoNode,
  WireSize,
} from '../../../sdk/index.js';
import { DEFAULT_CORES } from '../arbiter/cost.js';
import { type FastpassFabric, type FastpassHostConfig, planes, routeVia } from '../wire.js';

/** The `scheme:` properties Fastpass reads (besides kind). */
export const fastpassProperties = {
  policy: {
    enum: ['max-min', 'min-fct'],
    description:
      "the allocator's order. max-min (default): least recently allocated pair first, one timeslot per pair per pass; min-fct: fewest remaining timeslots first, each pair taking all it can",
  },
  fcpShare: {
    type: 'number',
    minimum: 0,
    maximum: 0.5,
    description:
      "share of every endpoint's timeslots, and of each rack's links to the spines, kept free for FCP's own frames, which are not scheduled (default 0.025)",
  },
  horizon: {
    ...duration,
    description:
      'each batch of 8 timeslots is allocated this long before its start (duration, ns if a number; default 65us; below takeover)',
  },
  arbiters: {
    type: 'integer',
    minimum: 1,
    maximum: 4,
    description: 'arbiter processes: the primary arb0 and secondaries arb1, ... on other ToRs (default 2)',
  },
  watchdog: {
    ...duration,
    description:
      'the primary sends each secondary a watchdog this often (duration, ns if a number; default 100us)',
  },
  takeover: {
    ...duration,
    description:
      "a secondary of rank r takes over after r x this of the primary's silence; above horizon (duration, ns if a number; default 1ms)",
  },
  aggregate: {
    ...duration,
    description:
      'a host gathers demand this long into one request to the arbiters (duration, ns if a number; default 4us)',
  },
  fcpTimeout: {
    ...duration,
    description:
      "FCP's retransmission timeout: a host asks again for demand unacknowledged, or unserved with nothing heard, this long (duration, ns if a number; default 200us)",
  },
  late: {
    ...duration,
    description:
      "a timeslot whose allocation arrives, or whose start a clock step passes, more than this late is not used and asked for again (duration, ns if a number; default two timeslots, an MTU's time at the host link rate each)",
  },
  qdiscLimit: {
    ...bytes,
    description:
      "bytes a host's Fastpass qdisc holds at most; packets beyond are dropped and counted (size, bytes if a number; default 16MiB)",
  },
  messages: {
    type: 'boolean',
    description:
      "message-level scheduling, Harmony's extension of Fastpass (NSDI'24 footnote 3): each flow is one message, its timeslots allocated consecutively; the host sends it itself, not the run's transport; no background traffic. Default false: per-packet timeslots, the paper's Fastpass",
  },
  admission: {
    ...duration,
    description:
      "with messages: a message not allocated within this of its request is rejected (counted in summary.fastpass.messages, its flow reported rejected) (Harmony's δadmission; duration, ns if a number; default: it waits for ever)",
  },
  /** the arbiter's worker cores under a compute model (§6.2; docs/compute.md) */
  cores: {
    type: 'object',
    additionalProperties: false,
    description:
      "the arbiter's worker cores under a compute model (§6.2; docs/compute.md); ignored without one",
    properties: {
      alloc: {
        type: 'integer',
        minimum: 1,
        description: "alloc-cores each batch's timeslots are allocated on (default 1)",
      },
      pathsel: {
        type: 'integer',
        minimum: 1,
        description: "pathsel-cores each batch's timeslots are path-coloured on (default 1)",
      },
    },
  },
  isolation: {
    type: 'object',
    additionalProperties: false,
    description:
      'fault isolation (§5.2): a spine (on a FatTree, a plane) endpoints blame for losses leaves path selection for a while; the last one in use never does',
    properties: {
      reporters: {
        type: 'integer',
        minimum: 1,
        description:
          'distinct endpoints that must report losses on one spine within window for it to be isolated (default 2)',
      },
      window: {
        ...duration,
        description:
          "the reporters' loss reports must fall within this long of each other (duration, ns if a number; default 1ms)",
      },
      hold: {
        ...duration,
        description:
          'an isolated spine stays out of path selection this long, then is tried again (duration, ns if a number; default 10ms)',
      },
    },
  },
};

export interface FastpassSettings {
  kind: 'fastpass';
  policy: 'max-min' | 'min-fct';
  fcpShare: number;
  slotNs: number;
  horizonNs: number;
  arbiters: number;
  watchdogNs: number;
  takeoverNs: number;
  aggregateNs: number;
  fcpTimeoutNs: number;
  lateNs: number;
  qdiscLimitBytes: number;
  isolation: { reporters: number; windowNs: number; holdNs: number };
  cores: { alloc: number; pathsel: number };
  /** message mode (absent: per-packet) */
  messages?: { admissionNs: number };
  [setting: string]: unknown;
}

export const FASTPASS_DEFAULTS = {
  policy: 'max-min',
  /**
   * one timeslot in 40 of every endpoint stays free for the FCP frames on its link, which are not
   * scheduled: measured here at 1.3-2.6% of the bytes a busy receiver gets (the paper reserves ~1%)
   */
  fcpShare: 0.025,
  horizonNs: 65_000,
  arbiters: 2,
  watchdogNs: 100_000,
  takeoverNs: 1_000_000,
  aggregateNs: 4_000,
  /** FCP's retransmission timeout, ours: FCP's counts are idempotent, which "permits aggressive timeouts" (§5.3) */
  fcpTimeoutNs: 200_000,
  /** a late allocation or a clock step past a timeslot by more than two timeslots is asked again */
  lateSlots: 2,
  /** the qdisc holds up to 16 MB (a host's TCP windows grow unchecked: Fastpass drops nothing, §6.1) */
  qdiscLimitBytes: 16 << 20,
  /** a spine is isolated when two endpoints report losses through it within 1 ms, for 10 ms */
  isolation: { reporters: 2, windowNs: 1_000_000, holdNs: 10_000_000 },
} as const;

/**
 * What a topology must be for Fastpass: racks (ToRs with hosts) under spines, one switch, or a k-ary
 * FatTree (racks in pods; paths assigned hierarchically, §4). An F10 tree's AB wiring is none of them.
 */
export function fastpassShape(
  topo: Topology,
): { racks: TopoNode[]; spines: TopoNode[]; cores: TopoNode[] } | string {
  if (topo.kind !== 'leaf-spine' && topo.kind !== 'star' && topo.kind !== 'fat-tree')
    return `fastpass routes leaf-spine, star and fat-tree topologies, not ${topo.kind}`;
  const switches = topo.nodes.filter((n) => n.role === 'switch');
  return {
    racks: switches.filter((n) => n.tier === 1),
    spines: switches.filter((n) => n.tier === 2),
    cores: switches.filter((n) => n.tier === 3),
  };
}

export function resolveFastpass(src: ScenarioSource, topo: Topology): FastpassSettings {
  const shape = fastpassShape(topo);
  if (typeof shape === 'string') throw src.error(['topology', 'kind'], shape);
  const sc = src.data.scheme ?? {};
  const hostRate = pathFigures(topo).hostRateBps;
  const slotNs = Math.ceil((8e9 * WireSize.Mtu) / hostRate);
  const s: FastpassSettings = {
    kind: 'fastpass',
    policy: sc.policy ?? FASTPASS_DEFAULTS.policy,
    fcpShare: sc.fcpShare ?? FASTPASS_DEFAULTS.fcpShare,
    slotNs,
    horizonNs: setting(src, ['horizon'], 'duration', FASTPASS_DEFAULTS.horizonNs),
    arbiters: sc.arbiters ?? FASTPASS_DEFAULTS.arbiters,
    watchdogNs: setting(src, ['watchdog'], 'duration', FASTPASS_DEFAULTS.watchdogNs),
    takeoverNs: setting(src, ['takeover'], 'duration', FASTPASS_DEFAULTS.takeoverNs),
    aggregateNs: setting(src, ['aggregate'], 'duration', FASTPASS_DEFAULTS.aggregateNs),
    fcpTimeoutNs: setting(src, ['fcpTimeout'], 'duration', FASTPASS_DEFAULTS.fcpTimeoutNs),
    lateNs: setting(src, ['late'], 'duration', FASTPASS_DEFAULTS.lateSlots * slotNs),
    qdiscLimitBytes:
      sc.qdiscLimit === undefined ? FASTPASS_DEFAULTS.qdiscLimitBytes : parseBytes(sc.qdiscLimit),
    isolation: {
      reporters: sc.isolation?.reporters ?? FASTPASS_DEFAULTS.isolation.reporters,
      windowNs: setting(src, ['isolation', 'window'], 'duration', FASTPASS_DEFAULTS.isolation.windowNs),
      holdNs: setting(src, ['isolation', 'hold'], 'duration', FASTPASS_DEFAULTS.isolation.holdNs),
    },
    cores: { ...DEFAULT_CORES, ...sc.cores },
  };
  if (sc.admission !== undefined && sc.messages !== true)
    throw src.error(
      ['scheme', 'admission'],
      'needs messages: true (a message waits for admission; per-packet timeslots are never rejected)',
    );
  // the message allocator schedules messages only: background flows through the qdisc would never
  // be given a timeslot (Harmony's Figure 6 has none)
  const background = (src.data.workload as { background?: unknown } | undefined)?.background;
  if (sc.messages === true && background !== undefined && background !== null)
    throw src.error(
      ['workload', 'background'],
      "fastpass's message mode (scheme.messages) schedules messages only: no background traffic",
    );
  if (sc.messages === true)
    s.messages = { admissionNs: sc.admission === undefined ? 0 : setting(src, ['admission'], 'duration', 0) };
  if (s.takeoverNs <= s.horizonNs)
    throw src.error(
      ['scheme', 'takeover'],
      `must exceed the horizon (${s.horizonNs} ns): a new primary must not allocate timeslots the old one may have given (§5.1)`,
    );
  if (s.qdiscLimitBytes < WireSize.Mtu)
    throw src.error(['scheme', 'qdiscLimit'], `must hold one MTU (${WireSize.Mtu} B), got ${sc.qdiscLimit}`);
  return s;
}

/** The ToR each arbiter attaches to: the first rack, then the last, then the others (spread over racks). */
export function arbiterRacks(topo: Topology, count: number): string[] {
  const shape = fastpassShape(topo) as { racks: TopoNode[] };
  const racks = shape.racks.map((r) => r.name);
  const order = racks.length > 1 ? [racks[0], racks[racks.length - 1], ...racks.slice(1, -1)] : racks;
  return Array.from({ length: count }, (_, i) => order[i % order.length]);
}

/** The fabric description the arbiters route with, from a topology that includes the arbiters. */
export function fastpassFabric(topo: Topology): FastpassFabric {
  const { racks, spines, cores } = fastpassShape(topo) as Exclude<ReturnType<typeof fastpassShape>, string>;
  const rackOf = new Map(racks.map((r, i) => [r.name, i]));
  const byName = new Map(topo.nodes.map((n) => [n.name, n]));
  const attach = (n: TopoNode) => {
    const tor = byName.get(n.ports[0].peer)!;
    return { rack: rackOf.get(tor.name)!, port: portToward(tor, n.name) };
  };
  const hosts = topo.nodes.filter((n) => n.role === 'host').map(attach);
  const hostLink = topo.links[topo.nodes.find((n) => n.role === 'host')!.ports[0].link];
  const spineLink = spines.length > 0 ? topo.links[spines[0].ports[0].link] : hostLink;
  const spineFactor = Math.max(1, Math.floor(spineLink.rateBps / hostLink.rateBps));
  const arbiters = topo.nodes.filter((n) => n.role === 'arbiter').map((a) => ({ id: a.id, ...attach(a) }));
  if (cores.length === 0)
    return {
      hosts,
      leafUp: racks.map((r) => spines.map((s) => portToward(r, s.name))),
      spineDown: spines.map((s) => racks.map((r) => portToward(s, r.name))),
      spineFactor,
      arbiters,
    };
  // a FatTree: pods of racks and aggregation switches, numbered pod-major (orchestrator/topology/fattree.ts)
  const pods = Math.max(...racks.map((r) => r.pod ?? 0)) + 1;
  const aggsOf = Array.from({ length: pods }, (_, p) => spines.filter((x) => x.pod === p));
  const racksOf = Array.from({ length: pods }, (_, p) => racks.filter((x) => x.pod === p));
  const coresPerAgg = cores.length / aggsOf[0].length;
  return {
    hosts,
    leafUp: racks.map((r) => aggsOf[r.pod ?? 0].map((a) => portToward(r, a.name))),
    spineDown: [],
    spineFactor,
    arbiters,
    pods: {
      podOf: racks.map((r) => r.pod ?? 0),
      rackIndex: racks.map((r) => racksOf[r.pod ?? 0].indexOf(r)),
      aggDown: aggsOf.map((aggs, p) => aggs.map((a) => racksOf[p].map((r) => portToward(a, r.name)))),
      aggUp: aggsOf.map((aggs) =>
        aggs.map((a, i) =>
          Array.from({ length: coresPerAgg }, (_, c) => portToward(a, cores[i * coresPerAgg + c].name)),
        ),
      ),
      coreDown: cores.map((c, j) =>
        aggsOf.map((aggs) => portToward(c, aggs[Math.floor(j / coresPerAgg)].name)),
      ),
      coresPerAgg,
    },
  };
}

/** A host's FCP routes to every arbiter: one per plane (one inside its rack). */
export function arbiterRoutes(f: FastpassFabric, host: number): FastpassHostConfig['arbiters'] {
  const rack = f.hosts[host].rack;
  return f.arbiters.map((a) => ({
    id: a.id,
    routes:
      a.rack === rack || planes(f) === 0
        ? [[a.port]]
        : Array.from({ length: planes(f) }, (_, s) => routeVia(f, rack, a.rack, a.port, s)),
  }));
}

/**
 * Message mode: how many timeslots later a packet on the longest path between racks reaches its
 * destination's ToR port than an in-rack one sent in the same timeslot: the extra fabric links'
 * propagation and store-and-forward of an MTU (two links on a leaf-spine, four across a FatTree's pods).
 */
export function crossRackLagSlots(topo: Topology, slotNs: number): number {
  const shape = fastpassShape(topo) as Exclude<ReturnType<typeof fastpassShape>, string>;
  if (shape.spines.length === 0) return 0;
  const link = topo.links[shape.spines[0].ports[0].link];
  const extraLinks = shape.cores.length > 0 ? 4 : 2;
  return Math.ceil((extraLinks * (link.propNs + (8e9 * WireSize.Mtu) / link.rateBps)) / slotNs);
}
