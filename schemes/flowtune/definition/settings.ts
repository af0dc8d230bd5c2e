/**
 * Flowtune's `scheme:` settings (TR'16) and the fabric its allocator models, derived from the
 * topology: racks under spines (a leaf-spine) or one switch (a star), with the allocator attached to
 * every spine (to the one switch) by its own fast link (§6.2: "connected using a 40 Gbits/s link to
 * each of the spine switches"). Defaults come from the paper: γ = 0.4, an iteration every 10 µs, a
 * 0.01 update threshold (§6.2, §6.4), F-NORM (§4.2), TCP control connections with a 20 µs minRTO and
 * 30 µs maxRTO (§6.2); rates live "a few tens of microseconds" (§2).
 */

import {
  duration,
  parseRateBps,
  portToward,
  rate,
  type ScenarioSource,
  setting,
  type Topology,
  type TopoNode,
  WireSize,
} from '../../../sdk/index.js';
import type { FlowtuneFabric, Normalize } from '../wire.js';

/** The `scheme:` properties Flowtune reads (besides kind). */
export const flowtuneProperties = {
  gamma: {
    type: 'number',
    exclusiveMinimum: 0,
    maximum: 4,
    description:
      "NED's step γ: each link's price moves by γ times its over-allocation over the Hessian diagonal (default 0.4)",
  },
  iteration: {
    ...duration,
    description:
      'the allocator runs one NED iteration this often on its node clock; shorter than lease (duration, ns if a number; default 10us)',
  },
  threshold: {
    type: 'number',
    minimum: 0,
    maximum: 0.5,
    description:
      'a host is told a rate when it moved by more than this share since it was last told, and links are allocated 1 - this of their capacity unless headroom says otherwise (default 0.01)',
  },
  headroom: {
    type: 'number',
    minimum: 0,
    maximum: 0.5,
    description:
      "the share of every link's capacity the allocator leaves unallocated (default: threshold, as §6.4 has it); e.g. 0.053 also leaves the ACKs of a full reverse flow (64 B per 1,500 B frame) their room",
  },
  normalize: {
    enum: ['f-norm', 'u-norm', 'none'],
    description:
      "f-norm (default): each flow's rate is divided by the worst load/capacity ratio on its path; u-norm: every flow's by the network's worst ratio; none: NED's rates as they are",
  },
  utility: {
    enum: ['proportional'],
    description:
      'the utility the allocator maximizes: proportional fairness, the only one (default proportional)',
  },
  lease: {
    ...duration,
    description:
      "a host's rates lapse, and its flows fall back to the transport's congestion control, this long after it last heard the allocator (duration, ns if a number; default 100us)",
  },
  heartbeat: {
    ...duration,
    description:
      'the allocator sends a host with flowlets an update at least this often, empty if need be; shorter than lease (duration, ns if a number; default 30us, or 0.3 x lease when lease is set)',
  },
  minRto: {
    ...duration,
    description:
      "the control channel's first retransmission timeout, for hosts' notifications and the allocator's updates alike; it doubles up to maxRto (duration, ns if a number; default 20us)",
  },
  maxRto: {
    ...duration,
    description:
      "the control channel's largest retransmission timeout, at least minRto; a host whose rates lapsed backs off further, up to ten leases (duration, ns if a number; default 30us)",
  },
  control: {
    enum: ['data', 'priority'],
    description:
      "the class of the hosts' notifications and the allocator's updates: data (default: they share the data queues, as the paper's ns-2 model has it, §6.2) or priority (strict priority above data: an ablation)",
  },
  allocatorLink: {
    ...rate,
    description:
      "rate of the allocator's own link to every spine, or to the one switch of a star (rate, bit/s if a number; default 40Gbps)",
  },
};

export interface FlowtuneSettings {
  kind: 'flowtune';
  gamma: number;
  iterationNs: number;
  threshold: number;
  /** the share of every link the allocator leaves unallocated */
  headroom: number;
  normalize: Normalize;
  utility: 'proportional';
  leaseNs: number;
  heartbeatNs: number;
  minRtoNs: number;
  maxRtoNs: number;
  allocatorLinkBps: number;
  control: 'data' | 'priority';
  [setting: string]: unknown;
}

export const FLOWTUNE_DEFAULTS = {
  gamma: 0.4,
  iterationNs: 10_000,
  threshold: 0.01,
  normalize: 'f-norm',
  utility: 'proportional',
  /** rates lapse 100 µs after the allocator was last heard; it speaks to busy hosts every 30 µs */
  leaseNs: 100_000,
  heartbeatNs: 30_000,
  minRtoNs: 20_000,
  maxRtoNs: 30_000,
  allocatorLinkBps: 40e9,
  control: 'data',
} as const;

/** Racks and spines of a topology Flowtune's allocator models (a leaf-spine or a star), or why not. */
export function flowtuneShape(topo: Topology): { racks: TopoNode[]; spines: TopoNode[] } | string {
  if (topo.kind !== 'leaf-spine' && topo.kind !== 'star')
    return `flowtune models two-tier fabrics: leaf-spine and star topologies, not ${topo.kind} (TR'16 §5)`;
  const switches = topo.nodes.filter((n) => n.role === 'switch');
  const spines = switches.filter((n) => n.tier === 2);
  if (spines.length > 31)
    return `flowtune names live spines in a 31-bit mask: at most 31 spines, not ${spines.length}`;
  return { racks: switches.filter((n) => n.tier === 1), spines };
}

export function resolveFlowtune(src: ScenarioSource, topo: Topology): FlowtuneSettings {
  const shape = flowtuneShape(topo);
  if (typeof shape === 'string') throw src.error(['topology', 'kind'], shape);
  const tr = src.data.transport;
  if (tr !== undefined && tr.kind !== undefined && tr.kind !== 'baseline')
    throw src.error(
      ['transport', 'kind'],
      `flowtune paces the baseline window transport and falls back to its congestion control, not '${tr.kind}'`,
    );
  const sc = src.data.scheme ?? {};
  const lease = setting(src, ['lease'], 'duration', FLOWTUNE_DEFAULTS.leaseNs);
  const s: FlowtuneSettings = {
    kind: 'flowtune',
    gamma: sc.gamma ?? FLOWTUNE_DEFAULTS.gamma,
    iterationNs: setting(src, ['iteration'], 'duration', FLOWTUNE_DEFAULTS.iterationNs),
    threshold: sc.threshold ?? FLOWTUNE_DEFAULTS.threshold,
    headroom: sc.headroom ?? sc.threshold ?? FLOWTUNE_DEFAULTS.threshold,
    normalize: sc.normalize ?? FLOWTUNE_DEFAULTS.normalize,
    utility: sc.utility ?? FLOWTUNE_DEFAULTS.utility,
    leaseNs: lease,
    heartbeatNs: setting(
      src,
      ['heartbeat'],
      'duration',
      sc.lease === undefined ? FLOWTUNE_DEFAULTS.heartbeatNs : Math.round(lease * 0.3),
    ),
    minRtoNs: setting(src, ['minRto'], 'duration', FLOWTUNE_DEFAULTS.minRtoNs),
    maxRtoNs: setting(src, ['maxRto'], 'duration', FLOWTUNE_DEFAULTS.maxRtoNs),
    allocatorLinkBps:
      sc.allocatorLink === undefined ? FLOWTUNE_DEFAULTS.allocatorLinkBps : parseRateBps(sc.allocatorLink),
    control: sc.control ?? FLOWTUNE_DEFAULTS.control,
  };
  if (s.heartbeatNs >= s.leaseNs)
    throw src.error(
      ['scheme', 'heartbeat'],
      `must be shorter than the lease (${s.leaseNs} ns): hosts would see their rates lapse while the allocator is alive`,
    );
  if (s.iterationNs >= s.leaseNs)
    throw src.error(['scheme', 'iteration'], `must be shorter than the lease (${s.leaseNs} ns)`);
  if (s.maxRtoNs < s.minRtoNs)
    throw src.error(['scheme', 'maxRto'], `must be at least minRto (${s.minRtoNs} ns)`);
  if (!(s.allocatorLinkBps > 0)) throw src.error(['scheme', 'allocatorLink'], 'must be a rate > 0');
  return s;
}

/** The fabric the allocator models, from a topology that includes the allocator. */
export function flowtuneFabric(topo: Topology): FlowtuneFabric {
  const { racks, spines } = flowtuneShape(topo) as { racks: TopoNode[]; spines: TopoNode[] };
  const rackOf = new Map(racks.map((r, i) => [r.name, i]));
  const byName = new Map(topo.nodes.map((n) => [n.name, n]));
  const hosts = topo.nodes.filter((n) => n.role === 'host');
  hosts.forEach((h, i) => {
    if (h.id !== i) throw new Error(`flowtune: host ${h.name} has id ${h.id}, not ${i}`);
  });
  const alloc = topo.nodes.find((n) => n.role === 'arbiter');
  const spineLink = spines.length > 0 ? topo.links[spines[0].ports[0].link] : undefined;
  return {
    hosts: hosts.map((h) => ({
      rack: rackOf.get(h.ports[0].peer)!,
      rateBps: topo.links[h.ports[0].link].rateBps,
    })),
    fabricRateBps: spineLink?.rateBps ?? 0,
    racks: racks.length,
    spines: spines.length,
    leafUp: racks.map((r) => spines.map((s) => portToward(r, s.name))),
    spineDown: spines.map((s) => racks.map((r) => portToward(s, r.name))),
    toAllocator:
      alloc === undefined
        ? []
        : (spines.length > 0 ? spines : racks.slice(0, 1)).map((s) => portToward(s, alloc.name)),
    hostPort: hosts.map((h) => portToward(byName.get(h.ports[0].peer)!, h.name)),
  };
}

/** Round trip of an empty fabric's longest path: a full frame out over every link, an ack back. */
export function emptyRttNs(topo: Topology): number {
  const { spines } = flowtuneShape(topo) as { spines: TopoNode[] };
  const h = topo.nodes.find((n) => n.role === 'host')!;
  const host = topo.links[h.ports[0].link];
  const hop = (l: { rateBps: number; propNs: number }) =>
    2 * l.propNs + ((WireSize.Mtu + WireSize.Small) * 8e9) / l.rateBps;
  let rtt = 2 * hop(host);
  if (spines.length > 0) rtt += 2 * hop(topo.links[spines[0].ports[0].link]);
  return Math.ceil(rtt);
}
