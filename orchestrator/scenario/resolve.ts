/**
 * Turns a schema-valid scenario into the resolved `Scenario`: units into numbers, defaults filled in
 * (each with its reason), the topology built, names checked against it. Problems that the schema
 * cannot see (an unknown node, a link that does not exist, a missing size distribution) are reported
 * with file and line like schema errors.
 */

import { WireSize } from '../../core/frame.js';
import type { HostStackConfig, LivenessConfig, SyncMode, TransportConfig } from '../../core/messages.js';
import type { Dist } from '../../core/random.js';
import type { ComputeModel, ComputeSettings } from '../../core/scheduler.js';
import { parseBytes, parseDurationNs, parseRateBps } from '../../core/time.js';
import { BASELINE_DEFAULTS, UDP_DEFAULTS } from '../../host/transport/index.js';
import type { WorkloadSpec } from '../../host/workload.js';
import type { LinkParams, Topology } from '../../topology/types.js';
import { resolveScheme, type SchemeSettings, schemeDefinition } from '../registry/index.js';
import { attachArbiters } from '../topology/arbiter.js';
import { buildTopology } from './build-topology.js';
import { type ClockModel, type PtpSettings, resolveClocks, resolveJitter, resolvePtp } from './clocks.js';
import { DEFAULTS, type PortDefaults } from './defaults.js';
import {
  applyEachDelays,
  classImpairment,
  eachLinkImpairments,
  type LinkImpairments,
} from './impairments.js';
import type { ScenarioSource } from './source.js';
import { type CapturePort, resolveCapture, resolveTimeline, type TimelineEvent } from './timeline.js';
import { resolveWorkload } from './workload.js';

export type { Dist } from '../../core/random.js';
export { MAX_NODES, NODE_PRIVATE_MB, nodesMemoryMb } from './build-topology.js';
export { type ClockModel, type JitterSettings, type PtpSettings, parseDist } from './clocks.js';
export { DEFAULTS, type PortDefaults } from './defaults.js';
export { type CapturePort, resolveInjected, type TimelineEvent } from './timeline.js';

export interface Scenario {
  file: string;
  name: string;
  tdf: number;
  seed: number;
  topology: Topology;
  links: { host: LinkParams; fabric: LinkParams };
  ports: PortDefaults;
  liveness: LivenessConfig;
  /** route withdrawal between switches on the baseline routing (switch/route-updates.ts) */
  routing: { withdraw: boolean; updateDelayNs: number };
  transport: TransportConfig;
  /** the host stack under the transport: send buffer, TCP small queues, the NIC's qdisc */
  host: HostStackConfig;
  /** the fabric design: ECMP, F10, the controller-only baseline, ... (orchestrator/registry/) */
  scheme: SchemeSettings;
  /** the links' impairments (scenarios.md#impairments): absent when every link is clean */
  impairments?: LinkImpairments;
  /** oscillator model; null: ideal clocks */
  clocks: ClockModel | null;
  /** PTP settings; null: no time synchronization */
  ptp: PtpSettings | null;
  /** host-side jitter models, ns (null: none): software stamp delay, late transmissions */
  jitter: { stampNs: Dist | null; sendNs: Dist | null };
  /** what computation costs, per role (null: nothing); switches are hardware */
  compute: { host: ComputeSettings | null; arbiter: ComputeSettings | null };
  workload: WorkloadSpec;
  /** how the node processes agree on time (docs/architecture.md: conservative and dilated time); `tdf` applies to dilated mode only */
  sync: SyncMode;
  run: {
    drainNs: number;
    sampleNs: number;
    /** per-source throughput intervals at the receivers (summary.fairness) */
    intervalNs: number;
    stepNs: number;
    missThreshold: number;
    logLevel: string;
    /** draw the results folder's plots (plots/) */
    plots: boolean;
    /** egress ports whose frames are written as pcapng, in topology order */
    capture: CapturePort[];
    /** frames written per captured port at most */
    captureLimit: number;
    /**
     * the run ends as soon as every flow is done from this time on: the workload's duration, or for a
     * list without one, its last flow's start or the last timeline entry, whichever is later
     */
    doneFromNs: number;
  };
  timeline: TimelineEvent[];
}

/** Fields only one transport kind takes: naming one under the other kind is an error. */
const TRANSPORT_FIELDS = {
  baseline: ['cc', 'rwnd', 'initCwnd', 'g', 'minRto', 'maxRto', 'dupAcks'],
  udp: ['rate', 'flowRate'],
} as const;

function resolveTransport(src: ScenarioSource, num: UnitReader): TransportConfig {
  const t = src.data.transport ?? {};
  const kind: 'baseline' | 'udp' = t.kind ?? 'baseline';
  for (const [other, fields] of Object.entries(TRANSPORT_FIELDS)) {
    if (other === kind) continue;
    for (const f of fields)
      if (t[f] !== undefined)
        throw src.error(['transport', f], `'${f}' applies to transport kind ${other}, not ${kind}`);
  }
  if (kind === 'udp') {
    const rateBps = t.rate === undefined ? 0 : num(['transport', 'rate'], t.rate, parseRateBps);
    if (!(rateBps >= 0))
      throw src.error(['transport', 'rate'], `rate must be >= 0 bit/s (0: the NIC rate), got ${rateBps}`);
    const flowRateBps =
      t.flowRate === undefined ? 0 : num(['transport', 'flowRate'], t.flowRate, parseRateBps);
    if (!(flowRateBps >= 0))
      throw src.error(
        ['transport', 'flowRate'],
        `flowRate must be >= 0 bit/s (0: unpaced), got ${flowRateBps}`,
      );
    return { ...UDP_DEFAULTS, rateBps, ...(flowRateBps > 0 && { flowRateBps }) };
  }
  return {
    ...BASELINE_DEFAULTS,
    ...(t.cc !== undefined && { cc: t.cc }),
    ...(t.rwnd !== undefined && { rwndBytes: num(['transport', 'rwnd'], t.rwnd, parseBytes) }),
    ...(t.initCwnd !== undefined && { initCwnd: t.initCwnd }),
    ...(t.g !== undefined && { g: t.g }),
    ...(t.dupAcks !== undefined && { dupAcks: t.dupAcks }),
    ...(t.minRto !== undefined && { minRtoNs: num(['transport', 'minRto'], t.minRto, parseDurationNs) }),
    ...(t.maxRto !== undefined && { maxRtoNs: num(['transport', 'maxRto'], t.maxRto, parseDurationNs) }),
  };
}

/** `host:`: the stack's preset, each field overridable */
function resolveHost(src: ScenarioSource, num: UnitReader): HostStackConfig {
  const h = src.data.host ?? {};
  const stack: 'linux' | 'unbounded' = h.stack ?? DEFAULTS.host.stack;
  const preset = DEFAULTS.host[stack];
  const bytesOf = (field: 'sendBuffer' | 'smallQueues'): number => {
    const v = num(['host', field], h[field] ?? preset[field], parseBytes);
    if (!(v >= 0)) throw src.error(['host', field], `must be >= 0 B (0: no limit), got ${v}`);
    return v;
  };
  const sendBufferBytes = bytesOf('sendBuffer');
  if (sendBufferBytes > 0 && sendBufferBytes < 2 * WireSize.Mss)
    throw src.error(
      ['host', 'sendBuffer'],
      `a send buffer must hold two ${WireSize.Mss}-byte segments (${2 * WireSize.Mss} B), got ${sendBufferBytes} B`,
    );
  const stackDelayNs =
    h.stackDelay === undefined ? 0 : num(['host', 'stackDelay'], h.stackDelay, parseDurationNs);
  if (!(stackDelayNs >= 0))
    throw src.error(['host', 'stackDelay'], `must be >= 0 ns (0: none), got ${stackDelayNs} ns`);
  return {
    stack,
    qdisc: h.qdisc ?? preset.qdisc,
    sendBufferBytes,
    smallQueueBytes: bytesOf('smallQueues'),
    cwndValidation: h.cwndValidation ?? preset.cwndValidation,
    // absent when 0, so a scenario without it resolves as before
    ...(stackDelayNs > 0 && { stackDelayNs }),
  };
}

export function resolveScenario(
  src: ScenarioSource,
  overrides: { tdf?: number; sync?: SyncMode } = {},
): Scenario {
  const d = src.data;
  const num = unitReader(src);
  const { links, impairments: classes } = resolveLinks(src, num);
  // the scheme's arbiters (F10's controller, ...) join the topology as nodes with their own links
  const fabric = buildTopology(src, links);
  const impairments = resolveImpairments(src, fabric, classes);
  const scheme = resolveScheme(src, fabric, links);
  const topology = attachArbiters(fabric, schemeDefinition(scheme.kind).arbiters?.(scheme, fabric) ?? []);
  const ports = resolvePorts(src, num);
  const liveness = resolveLiveness(src, num);
  const routing = resolveRouting(src, num);
  const transport = resolveTransport(src, num);
  const host = resolveHost(src, num);
  const clocks = resolveClocks(src, topology);
  const ptp = resolvePtp(src, topology);
  if (clocks && ptp && clocks.reference === null) clocks.reference = ptp.candidates[0];
  const seed = d.seed ?? DEFAULTS.seed;
  const workload = resolveWorkload(src, topology, seed);
  checkStoppedFlows(src, transport, scheme);
  const run = resolveRun(src, num, topology);
  const timeline = resolveTimeline(src, topology, workload.durationNs + run.drainNs);
  // a list of flows without a duration is done when its flows are: not 20 ms (the default) later
  const listed = workload.pattern === 'list' && d.workload?.duration === undefined;
  run.doneFromNs = listed
    ? Math.max(0, ...(workload.flows ?? []).map((f) => f.stop ?? f.start), ...timeline.map((e) => e.at))
    : workload.durationNs;
  const tdf = overrides.tdf ?? d.tdf ?? DEFAULTS.tdf;
  if (!(tdf > 0)) throw src.error(['tdf'], `tdf must be > 0, got ${tdf}`);
  checkRun(src, run);
  // a tdf given on the command line asks for dilated time, unless the mode is named there too
  const sync: SyncMode =
    overrides.sync ?? (overrides.tdf !== undefined ? 'dilated' : (d.run?.sync ?? DEFAULTS.run.sync));
  const jitter = resolveJitter(src, sync);
  const compute = resolveCompute(src, sync);
  return {
    file: src.file,
    name: d.name ?? src.file.replace(/^.*\//, '').replace(/\.ya?ml$/, ''),
    tdf,
    seed,
    topology,
    links,
    ports,
    liveness,
    routing,
    transport,
    host,
    scheme,
    ...(impairments && { impairments }),
    clocks,
    ptp,
    jitter,
    compute,
    workload,
    sync,
    run,
    timeline,
  };
}

/** Reads a field with a unit (`1ms`, `10Gbps`, `64KB`): a parse error becomes the file's error at `path`. */
type UnitReader = <T>(path: Array<string | number>, v: unknown, parse: (v: string | number) => T) => T;

function unitReader(src: ScenarioSource): UnitReader {
  return (path, v, parse) => {
    try {
      return parse(v as string | number);
    } catch (err) {
      throw src.error(path, (err as Error).message);
    }
  };
}

/**
 * `links.host` and `links.fabric`: rate and delay, and their impairments (a delay distribution's
 * floor is the class's propagation delay).
 */
function resolveLinks(
  src: ScenarioSource,
  num: UnitReader,
): {
  links: { host: LinkParams; fabric: LinkParams };
  impairments: Pick<LinkImpairments, 'host' | 'fabric'>;
} {
  const impairments: Pick<LinkImpairments, 'host' | 'fabric'> = {};
  const linkOf = (which: 'host' | 'fabric'): LinkParams => {
    const l = src.data.links?.[which] ?? {};
    const rateBps = num(['links', which, 'rate'], l.rate ?? DEFAULTS.link.rate, parseRateBps);
    if (!(rateBps > 0)) throw src.error(['links', which, 'rate'], 'link rate must be > 0');
    const { propNs, impair } = classImpairment(src, which, rateBps);
    if (impair) impairments[which] = impair;
    return {
      rateBps,
      propNs: propNs ?? num(['links', which, 'delay'], l.delay ?? DEFAULTS.link.delay, parseDurationNs),
    };
  };
  return { links: { host: linkOf('host'), fabric: linkOf('fabric') }, impairments };
}

/** The classes' impairments with `links.each` over them, on the built fabric; undefined when every link is clean. */
function resolveImpairments(
  src: ScenarioSource,
  topo: Topology,
  classes: Pick<LinkImpairments, 'host' | 'fabric'>,
): LinkImpairments | undefined {
  const each = eachLinkImpairments(src, topo);
  if (each.length === 0 && !classes.host && !classes.fabric) return undefined;
  const imp: LinkImpairments = { ...classes, each, delays: {} };
  imp.delays = applyEachDelays(topo, imp);
  return imp;
}

/** `ports`: the switches' buffers and marking, and the hosts' NICs'. */
function resolvePorts(src: ScenarioSource, num: UnitReader): PortDefaults {
  const p = src.data.ports ?? {};
  const ports: PortDefaults = {
    bufferBytes: num(['ports', 'buffer'], p.buffer ?? DEFAULTS.ports.buffer, parseBytes),
    ecnBytes: num(['ports', 'ecnThreshold'], p.ecnThreshold ?? DEFAULTS.ports.ecnThreshold, parseBytes),
    commitAheadNs: num(
      ['ports', 'commitAhead'],
      p.commitAhead ?? DEFAULTS.ports.commitAhead,
      parseDurationNs,
    ),
    hostBufferBytes: num(['ports', 'hostBuffer'], p.hostBuffer ?? DEFAULTS.ports.hostBuffer, parseBytes),
    hostEcnBytes: num(
      ['ports', 'hostEcnThreshold'],
      p.hostEcnThreshold ?? DEFAULTS.ports.hostEcnThreshold,
      parseBytes,
    ),
  };
  if (ports.bufferBytes < 1500)
    throw src.error(['ports', 'buffer'], `buffer must hold one 1500-byte frame, got ${ports.bufferBytes} B`);
  if (ports.hostBufferBytes < 1500)
    throw src.error(
      ['ports', 'hostBuffer'],
      `a NIC buffer must hold one 1500-byte frame, got ${ports.hostBufferBytes} B`,
    );
  if (!(ports.ecnBytes >= 0))
    throw src.error(['ports', 'ecnThreshold'], `must be >= 0 B (0 disables marking), got ${ports.ecnBytes}`);
  if (!(ports.hostEcnBytes >= 0))
    throw src.error(
      ['ports', 'hostEcnThreshold'],
      `must be >= 0 B (0: a NIC marks nothing), got ${ports.hostEcnBytes}`,
    );
  return ports;
}

/** `liveness`: the keepalive interval and how many missed ones declare a link down. */
function resolveLiveness(src: ScenarioSource, num: UnitReader): LivenessConfig {
  const lv = src.data.liveness ?? {};
  const liveness: LivenessConfig = {
    intervalNs: num(['liveness', 'interval'], lv.interval ?? DEFAULTS.liveness.interval, parseDurationNs),
    multiplier: lv.multiplier ?? DEFAULTS.liveness.multiplier,
  };
  if (!(liveness.intervalNs > 0)) throw src.error(['liveness', 'interval'], 'interval must be > 0');
  return liveness;
}

/** `routing`: whether switches withdraw routes over a failed link, and how long an update takes. */
function resolveRouting(src: ScenarioSource, num: UnitReader): Scenario['routing'] {
  const rt = src.data.routing ?? {};
  const routing = {
    withdraw: rt.withdraw ?? DEFAULTS.routing.withdraw,
    updateDelayNs: num(
      ['routing', 'updateDelay'],
      rt.updateDelay ?? DEFAULTS.routing.updateDelay,
      parseDurationNs,
    ),
  };
  if (!(routing.updateDelayNs >= 0))
    throw src.error(['routing', 'updateDelay'], `must be >= 0, got ${routing.updateDelayNs} ns`);
  return routing;
}

/** A listed flow with a `stop` needs a transport and a scheme whose hosts can stop one. */
function checkStoppedFlows(
  src: ScenarioSource,
  transport: TransportConfig,
  scheme: Scenario['scheme'],
): void {
  const stopping = (src.data.workload?.flows ?? []).findIndex(
    (f: { stop?: unknown }) => f?.stop !== undefined,
  );
  if (stopping < 0) return;
  const at = ['workload', 'flows', stopping, 'stop'];
  if (transport.kind !== 'baseline')
    throw src.error(at, `the ${transport.kind} transport cannot stop a flow: use the baseline transport`);
  if (schemeDefinition(scheme.kind).stopsFlows?.(scheme) !== true)
    throw src.error(at, `scheme ${scheme.kind}'s hosts cannot stop a flow before it is sent`);
}

/** `run`: drain, sampling, steps, logs, plots and captures (`doneFromNs` is set from the workload after). */
function resolveRun(src: ScenarioSource, num: UnitReader, topology: Topology): Scenario['run'] {
  const r = src.data.run ?? {};
  return {
    drainNs: num(['run', 'drain'], r.drain ?? DEFAULTS.run.drain, parseDurationNs),
    sampleNs: num(['run', 'sample'], r.sample ?? DEFAULTS.run.sample, parseDurationNs),
    intervalNs: num(['run', 'interval'], r.interval ?? DEFAULTS.run.interval, parseDurationNs),
    stepNs: num(['run', 'step'], r.step ?? DEFAULTS.run.step, parseDurationNs),
    missThreshold: r.missThreshold ?? DEFAULTS.run.missThreshold,
    logLevel: r.logLevel ?? DEFAULTS.run.logLevel,
    plots: r.plots ?? DEFAULTS.run.plots,
    capture: resolveCapture(src, topology),
    captureLimit: r.captureLimit ?? DEFAULTS.run.captureLimit,
    doneFromNs: 0,
  };
}

function checkRun(src: ScenarioSource, run: Scenario['run']): void {
  if (!(run.stepNs > 0)) throw src.error(['run', 'step'], `step must be > 0, got ${run.stepNs} ns`);
  if (!(run.sampleNs > 0)) throw src.error(['run', 'sample'], `sample must be > 0, got ${run.sampleNs} ns`);
  if (!(run.intervalNs > 0))
    throw src.error(['run', 'interval'], `interval must be > 0, got ${run.intervalNs} ns`);
}

/**
 * The compute model per role: the section's model and scale, a role's own overriding them. Dilated
 * mode takes real time for real computation already: a model there is an error, not ignored.
 */
function resolveCompute(src: ScenarioSource, sync: SyncMode): Scenario['compute'] {
  const c = src.data.compute;
  if (c === undefined) return { host: null, arbiter: null };
  const role = (r: 'host' | 'arbiter'): ComputeSettings | null => {
    const model: ComputeModel = c[r]?.model ?? c.model ?? 'none';
    const scale: number = c[r]?.scale ?? c.scale ?? 1;
    if (model === 'none') return null;
    if (sync !== 'conservative')
      throw src.error(
        c[r]?.model !== undefined ? ['compute', r, 'model'] : ['compute', 'model'],
        `compute model '${model}' needs conservative mode: in dilated mode computation takes real time already`,
      );
    return { model, scale };
  };
  return { host: role('host'), arbiter: role('arbiter') };
}
