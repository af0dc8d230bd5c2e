/**
 * Plans a run: from the resolved scenario and its topology, the configuration of every node process
 * (ports with link and buffer parameters, routing tables, liveness, transport, its own flows) and the
 * complete flow list the orchestrator keeps for accounting.
 */
import type { Impairment } from '../../core/impair.js';
import type { ClockConfig, FlowSpec, NodeConfig, PortConfig, PtpConfig } from '../../core/messages.js';
import { draw, Rng } from '../../core/random.js';
import type { Epoch } from '../../core/time.js';
import { generateFlows } from '../../host/workload.js';
import type { Topology, TopoNode } from '../../topology/types.js';
import { schemeDefinition } from '../registry/index.js';
import { directionImpairment } from '../scenario/impairments.js';
import type { Scenario } from '../scenario/resolve.js';
import { routingTable } from '../topology/routing.js';

export interface Plan {
  nodes: NodeConfig[];
  flows: FlowSpec[];
}

export function planRun(
  sc: Scenario,
  opts: { epoch: Epoch; bindHost: (name: string) => string; logDir: string | null },
): Plan {
  const topo = sc.topology;
  const hosts = topo.nodes.filter((n) => n.role === 'host');
  const hostRate = Math.min(...hosts.map((h) => topo.links[h.ports[0].link].rateBps));
  const flows = generateFlows(
    sc.workload,
    hosts.map((h) => h.id),
    hostRate,
  );
  const byName = new Map(topo.nodes.map((n) => [n.name, n]));
  const hostIds = hosts.map((h) => h.id);
  const ptp = ptpConfig(sc, byName, hostIds);
  const clockOf = clockDrawer(sc, ptp);
  // the scheme's part of each node's config (F10 addresses, its controller's settings, ...)
  const driver = schemeDefinition(sc.scheme.kind);
  // captured egress ports, by node
  const captured = new Map<string, number[]>();
  for (const c of sc.run.capture) captured.set(c.node, [...(captured.get(c.node) ?? []), c.port]);
  const nodes = topo.nodes.map((n): NodeConfig => {
    const isHost = n.role === 'host';
    const capture = captured.get(n.name);
    const own = driver.nodeScheme?.(sc.scheme, topo, n);
    // the node process loads the scheme's parts by module
    const scheme = own && driver.parts !== undefined ? { ...own, parts: driver.parts } : own;
    const ports = portsOf(sc, n, byName);
    return {
      name: n.name,
      id: n.id,
      kind: n.role,
      tier: n.tier,
      sync: sc.sync,
      tdf: sc.tdf,
      epoch: opts.epoch,
      seed: sc.seed * 1000003 + n.id,
      bindHost: opts.bindHost(n.name),
      logFile: opts.logDir ? `${opts.logDir}/${n.name}.log` : null,
      logLevel: sc.run.logLevel,
      ports,
      liveness: sc.liveness,
      sampleNs: n.role === 'arbiter' ? 0 : sc.run.sampleNs,
      ...withClock(clockOf(n.name, n.id), ptp),
      ...(scheme && { scheme }),
      ...(isHost && { transport: sc.transport, host: sc.host, flows: flows.filter((f) => f.src === n.id) }),
      ...(isHost && hostJitter(sc)),
      ...(isHost && { intervalNs: sc.run.intervalNs }),
      ...(n.role === 'switch' && { routing: routingTable(topo, n.name) }),
      ...(n.role === 'switch' &&
        sc.routing.withdraw && { routeUpdates: { updateDelayNs: sc.routing.updateDelayNs } }),
      ...(capture && { capture: { ports: capture, limit: sc.run.captureLimit } }),
      ...computeOf(sc, n.role),
    };
  });
  return { nodes, flows };
}

/** the most switches a path between two hosts crosses: up to the top tier and down again */
function switchesAcross(topo: Topology): number {
  const top = Math.max(0, ...topo.nodes.filter((n) => n.role === 'switch').map((n) => n.tier));
  return Math.max(1, 2 * top - 1);
}

/** the node's compute model, if its role has one (switches are hardware) */
function computeOf(sc: Scenario, role: string): Pick<NodeConfig, 'compute'> {
  const c = role === 'host' ? sc.compute.host : role === 'arbiter' ? sc.compute.arbiter : null;
  return c ? { compute: c } : {};
}

function withClock(clock: ClockConfig | undefined, ptp: PtpConfig | undefined): Partial<NodeConfig> {
  return { ...(clock && { clock }), ...(ptp && { ptp }) };
}

/** A perfect oscillator: the reference (GPS-disciplined) clock, or every clock when only PTP is asked for. */
function ideal(id: number): ClockConfig {
  return { offsetNs: 0, freqPpm: 0, wanderPpmPerSqrtS: 0, granularityNs: 0, seed: id };
}

/** A host's jitter models, if any apply: the stamp model only where software stamps are taken. */
function hostJitter(sc: Scenario): Pick<NodeConfig, 'jitter'> {
  const { stampNs, sendNs } = sc.jitter;
  const stamp = stampNs && sc.ptp?.timestamping === 'software' ? stampNs : null;
  if (!stamp && !sendNs) return {};
  return { jitter: { ...(stamp && { stamp }), ...(sendNs && { send: sendNs }) } };
}

/** The PTP part of every node's config, or undefined without `ptp:`. */
function ptpConfig(
  sc: Scenario,
  byName: ReadonlyMap<string, TopoNode>,
  hostIds: number[],
): PtpConfig | undefined {
  if (!sc.ptp) return undefined;
  const topo = sc.topology;
  return {
    timestamping: sc.ptp.timestamping,
    switchClocks: sc.ptp.switchClocks,
    ...(sc.ptp.warmupNs > 0 && { warmupNs: sc.ptp.warmupNs }),
    // through boundary clocks an Announce is qualified anew at every switch (two of them, an interval
    // apart): the candidates claim the domain that many intervals apart, plus one
    ...(sc.ptp.switchClocks === 'boundary' && {
      claimStaggerNs: (switchesAcross(topo) + 1) * sc.ptp.announceIntervalNs,
    }),
    delayMechanism: sc.ptp.delayMechanism,
    syncIntervalNs: sc.ptp.syncIntervalNs,
    announceIntervalNs: sc.ptp.announceIntervalNs,
    ...(sc.ptp.delayReqIntervalNs !== undefined && { delayReqIntervalNs: sc.ptp.delayReqIntervalNs }),
    announceTimeout: sc.ptp.announceTimeout,
    candidates: sc.ptp.candidates.map((c) => byName.get(c)!.id),
    datasets: Object.fromEntries(
      Object.entries(sc.ptp.datasets).map(([name, d]) => [byName.get(name)!.id, d]),
    ),
    seed: sc.seed,
    hosts: hostIds,
    delayFilter: sc.ptp.delayFilter,
    lockThresholdNs: sc.ptp.lockThresholdNs,
    sampleNs: sc.ptp.sampleNs,
    servo: sc.ptp.servo,
  };
}

/**
 * Each node's oscillator, drawn from the run's seed in the order nodes ask (node order), so a run is
 * repeatable; the reference clock, and every clock of a PTP run without `clocks:`, is ideal.
 */
function clockDrawer(
  sc: Scenario,
  ptp: PtpConfig | undefined,
): (name: string, id: number) => ClockConfig | undefined {
  const clockRng = new Rng(sc.seed * 7919 + 17);
  return (name, id) => {
    const m = sc.clocks;
    if (!m) return ptp ? ideal(id) : undefined;
    if (m.reference === name) return ideal(id);
    return {
      offsetNs: draw(m.offsetNs, clockRng),
      freqPpm: draw(m.freqPpm, clockRng),
      wanderPpmPerSqrtS: m.wanderPpmPerSqrtS,
      granularityNs: m.granularityNs,
      seed: sc.seed * 65537 + id,
    };
  };
}

/** A node's egress ports: its links' rate and delay, and the scenario's buffers and marking for its role. */
function portsOf(sc: Scenario, n: TopoNode, byName: ReadonlyMap<string, TopoNode>): PortConfig[] {
  return n.ports.map((p): PortConfig => {
    const link = sc.topology.links[p.link];
    return {
      index: p.index,
      peer: p.peer,
      peerId: byName.get(p.peer)!.id,
      peerPort: p.peerPort,
      dir: p.dir,
      rateBps: link.rateBps,
      propNs: link.propNs,
      // hosts and arbiters are servers: a NIC's buffer, and no marking unless the scenario asks for it
      // (`ports.hostEcnThreshold`; DCTCP marks at the switches)
      bufferBytes: n.role === 'switch' ? sc.ports.bufferBytes : sc.ports.hostBufferBytes,
      ecnBytes: n.role === 'switch' ? sc.ports.ecnBytes : sc.ports.hostEcnBytes,
      commitAheadNs: sc.ports.commitAheadNs,
      ...impairmentOn(sc, n.name, p.peer),
    };
  });
}

/** the direction's impairments (orchestrator/scenario/impairments.ts), on an impaired link only */
function impairmentOn(sc: Scenario, from: string, to: string): { impair?: Impairment } {
  const impair = sc.impairments && directionImpairment(sc.topology, sc.impairments, from, to);
  return impair ? { impair } : {};
}
