/**
 * One node of a run (core/node-runtime.ts starts it): from its config it builds the clock and
 * scheduler, the endpoint, the egress ports with their wire filters, the liveness detector and its
 * role; it acts on the orchestrator's control messages and faults, and stops and reports.
 */
import { readFileSync } from 'node:fs';
import { CaptureRecorder } from './capture.js';
import { IdealClock, type NodeClock } from './clock.js';
import type { ControlClient } from './control.js';
import { EmulatedClock } from './emulated-clock.js';
import { Endpoint, type EndpointStats } from './endpoint.js';
import type { Frame } from './frame.js';
import { FrameType } from './frame.js';
import { type LinkDetector, LivenessDetector } from './liveness.js';
import { closeLogger, createLogger } from './log.js';
import type {
  ControlMessage,
  FaultCommand,
  NodeConfig,
  NodeEvent,
  NodeReport,
  ProgressStats,
} from './messages.js';
import { Metrics } from './metrics.js';
import { Oscillator } from './oscillator.js';
import { EgressPort } from './port.js';
import { draw, Rng } from './random.js';
import type { NodeContext, Role, RoleSetup } from './role.js';
import { CONTROL_LANE, type EventFn, Scheduler } from './scheduler.js';
import { ConservativeSync } from './sync.js';
import { PhysClock } from './time.js';

/** The endpoint's counters as the node's metrics name them. */
const ENDPOINT_COUNTERS: ReadonlyArray<[string, keyof EndpointStats]> = [
  ['malformed', 'malformed'],
  ['corrupted', 'corrupted'],
  ['datagramsIn', 'datagramsIn'],
  ['datagramsOut', 'datagramsOut'],
  ['framesIn', 'framesIn'],
  ['framesOut', 'framesOut'],
  ['sendErrors', 'sendErrors'],
  ['forged', 'forged'],
  ['foreignDatagrams', 'foreign'],
  ['duplicates', 'duplicates'],
  ['rejected', 'rejected'],
  ['datagramsHeld', 'held'],
  ['nullMessages', 'nullOut'],
  ['datagramGaps', 'gaps'],
  ['datagramsFromCrashedPeer', 'fromGone'],
  ['framesToCrashedPeer', 'toGone'],
];

/** a node that was told to stop ends within this long (real ms), reported or not */
const STOP_DEADLINE_MS = 5000;
/**
 * A node in a container stays after its report until its runtime stops it (SIGTERM) or its
 * orchestrator is gone (the control connection closes), within this long: the runtime then stops the
 * containers one at a time. Docker 20.10's network bookkeeping races when many containers of one
 * network exit at once, and keeps a count of endpoints that are gone ("has active endpoints" with no
 * container left, until the daemon restarts). Set by the runtime: `DCEMU_STAY_AFTER_REPORT=1`.
 */
const STAY_DEADLINE_MS = 60_000;

export class NodeProcess {
  private ctx: NodeContext | null = null;
  private role: Role | null = null;
  private endpoint: Endpoint | null = null;
  private exiting = false;
  private sentWhileDown: number[] = [];
  /** conservative mode: the node's synchronization with its links and the orchestrator */
  private sync: ConservativeSync | null = null;
  /** tie keys of timeline actions, in the order the orchestrator sent them */
  private controlSeq = CONTROL_LANE;
  /** packet capture of the ports `run.capture` names, if any */
  private capture: CaptureRecorder | null = null;

  /** the process's CPU when this node began (a pooled process ran others before it) */
  private readonly cpuAtStart = process.cpuUsage();

  constructor(
    private readonly client: ControlClient,
    private readonly setup: (config: NodeConfig) => Promise<RoleSetup>,
    /** the node has ended: its process exits with `code`, or (pooled) runs the next node */
    private readonly end: (code: number) => void,
  ) {}

  async handle(m: ControlMessage): Promise<void> {
    try {
      switch (m.type) {
        case 'config':
          await this.configure(m.config, m.tag);
          break;
        case 'peers':
          this.endpoint?.setPeers(m.peers);
          break;
        case 'start':
          if (this.ctx) {
            const { liveness, clock } = this.ctx;
            this.ctx.sched.at(m.at, () => liveness.start(clock.now()));
          }
          // the role's timers are its own code (they wait while the node computes)
          if (this.role && this.ctx) {
            const role = this.role;
            this.ctx.sched.runCode(this.ctx.sched.current, () => role.start(m.at));
          }
          this.ctx?.sched.arm();
          this.sync?.kick();
          break;
        case 'fault':
          this.timed(m.at, this.applyFault, m.fault);
          break;
        case 'grant':
          this.sync?.setGrant(m.until);
          break;
        case 'halt':
          this.sync?.haltAtTime(m.at, m.until ?? Number.POSITIVE_INFINITY);
          break;
        case 'relink':
          this.endpoint?.relink(m.port);
          this.endpoint?.flush();
          this.client.send({ type: 'relinked', port: m.port });
          break;
        case 'pause':
          this.sync?.pause(m.from, m.until);
          break;
        case 'peer-gone':
          if (this.endpoint)
            this.client.send({ type: 'peer-gone', port: m.port, at: this.endpoint.peerGone(m.port) });
          break;
        case 'snapshot':
          this.capture?.flush();
          // the live view's queues ride the snapshots only, not every barrier's `reached`
          this.client.send({ type: 'stats', stats: { ...this.progress(), queues: this.role?.queues?.() } });
          break;
        case 'stop':
          await this.stop('stop');
          break;
        case 'kill':
          // dilated mode: the timeline kills the node now; it stops and reports, then dies for real
          this.haltReport();
          break;
      }
    } catch (err) {
      this.client.send({ type: 'error', message: (err as Error).stack ?? String(err) });
    }
  }

  /**
   * A timeline action: conservative mode applies it at its exact time, before anything else at that
   * time (the control lane); dilated mode applies it when it arrives, as a real box would.
   */
  private timed(at: number | undefined, fn: EventFn, arg: unknown): void {
    const sched = this.ctx!.sched;
    if (sched.conservative && at !== undefined) {
      sched.atKeyed(at, this.controlSeq++, fn, arg);
      this.sync!.kick();
    } else {
      fn(sched.now(), arg, undefined);
    }
  }

  private readonly applyFault = (now: number, f: FaultCommand): void => {
    const ctx = this.ctx!;
    if (f.kind === 'clock') {
      // the oscillator is disturbed underneath the clock; protocols must notice on their own
      const osc = ctx.oscillator;
      if (!osc) throw new Error('clock fault on a node without an emulated oscillator');
      if (f.stepNs !== undefined) osc.stepPhase(f.stepNs, now);
      if (f.freqPpm !== undefined) osc.setFrequencyPpm(f.freqPpm, now);
      (ctx.clock as EmulatedClock).retime();
      ctx.log.info({ fault: f }, 'clock fault applied');
      return;
    }
    const port = ctx.ports[f.port];
    if (!port) throw new Error(`fault on unknown port ${f.port}`);
    if (f.kind === 'wire') port.wire.set(f.state);
    else port.wire.reset();
    ctx.log.info({ fault: f }, 'wire fault applied');
  };

  private async configure(config: NodeConfig, tag: number): Promise<void> {
    // the role and its scheme's parts first: loading them is the only wait before the node exists
    const setup = await this.setup(config);
    const log = createLogger(config.logFile, config.logLevel, { node: config.name });
    log.info({ kind: config.kind, ports: config.ports.length }, 'starting node');
    const conservative = config.sync === 'conservative';
    const sched = new Scheduler(conservative ? null : new PhysClock(config.epoch, config.tdf));
    if (config.compute) sched.setCompute(config.compute);
    // an emulated oscillator when the scenario models clocks, else node time is physical time
    const oscillator = config.clock ? new Oscillator(config.clock) : null;
    const clock: NodeClock = oscillator ? new EmulatedClock(sched, oscillator) : new IdealClock(sched);
    const metrics = new Metrics();
    const endpoint = this.newEndpoint(config, sched, tag);
    this.endpoint = endpoint;
    let liveness: LinkDetector | null = null;
    // Loss accounting per port, for failure studies: data frames sent since the peer was last heard
    // (lost if the peer is dead: counted when the port is declared down), and data frames sent on a
    // port while it is declared down (lost after detection).
    const txSinceHeard = config.ports.map(() => 0);
    const sentWhileDown = config.ports.map(() => 0);
    const sink = (port: number, frame: Frame): void => {
      liveness!.sent(port, clock.now());
      endpoint.send(port, frame);
    };
    const ports = egressPorts(config, sched, sink, setup);
    const emit = (kind: string, t: number, fields: Record<string, unknown> = {}): void => {
      const event: NodeEvent = { t, kind, node: config.name, ...fields };
      this.client.send({ type: 'event', event });
      log.info(event, kind);
    };
    liveness = this.detector(config, setup, sched, clock, ports, emit, { txSinceHeard, sentWhileDown });
    this.sentWhileDown = sentWhileDown;
    const ctx: NodeContext = {
      config,
      sched,
      clock,
      oscillator,
      ports,
      liveness,
      metrics,
      log,
      emit,
    };
    this.ctx = ctx;
    const role = setup.role(ctx);
    this.role = role;
    watchDepartures(config, role, ports, liveness, { txSinceHeard, sentWhileDown });
    // capture at the transmission start, after the wire filter: what the port sent and what became of it
    if (config.capture) {
      const capture = new CaptureRecorder(config.capture, (records, dropped) =>
        this.client.send({ type: 'capture', records, dropped }),
      );
      for (const i of config.capture.ports) ports[i].capture = capture.record;
      this.capture = capture;
    }
    const live = liveness;
    // conservative mode: how long after an arrival a keepalive finds its link up (0: no quiet keepalives)
    const quietDetectNs = wireDetector(endpoint, live, clock, conservative);
    const roleFrame = (now: number, port: number, frame: Frame): void => role.onFrame(now, port, frame);
    endpoint.onFrame((now, port, frame) => {
      live.heard(port, clock.now(), frame);
      txSinceHeard[port] = 0;
      if (frame.t === FrameType.Keepalive) return;
      // the role's code: it waits while the node computes (compute model)
      sched.runCode(now, roleFrame, port, frame);
    });
    if (conservative) this.sync = this.conservativeSync(sched, ports, endpoint);
    const { address: udpHost, port: udpPort } = await endpoint.bind(config.bindHost, config.bindPort ?? 0);
    log.info({ udpHost, udpPort }, 'node started');
    // its peers learn (from the orchestrator, with its address) which of their keepalives it runs quietly
    this.client.send({ type: 'ready', udpHost, udpPort, quietDetectNs });
  }

  /**
   * Its link failure detector (its scheme's, else the BFD-like one), which tells the role of a port
   * found down or up, with the frames sent into the silence (`counts`).
   */
  private detector(
    config: NodeConfig,
    setup: RoleSetup,
    sched: Scheduler,
    clock: NodeClock,
    ports: EgressPort[],
    emit: (kind: string, t: number, fields?: Record<string, unknown>) => void,
    counts: { txSinceHeard: number[]; sentWhileDown: number[] },
  ): LinkDetector {
    const { txSinceHeard, sentWhileDown } = counts;
    const livenessPorts = ports.map((p) => ({
      index: p.index,
      send: (f: Frame) => p.send(f, sched.current),
    }));
    // the detector runs on the node's clock, so its `now` is node time; the role takes physical time,
    // as everywhere (what it sends starts then: a node clock behind would stamp frames before the
    // promises already made on the link)
    const livenessEvents = {
      portDown: (port: number, now: number, silentNs: number) => {
        const unconfirmed = txSinceHeard[port];
        emit('port-down-detected', now, { port, peer: config.ports[port].peer, silentNs, unconfirmed });
        sched.runCode(sched.current, (t) => this.role?.portDown(port, t));
      },
      portUp: (port: number, now: number) => {
        emit('port-up-detected', now, {
          port,
          peer: config.ports[port].peer,
          sentWhileDown: sentWhileDown[port],
        });
        sentWhileDown[port] = 0;
        sched.runCode(sched.current, (t) => this.role?.portUp(port, t));
      },
    };
    return (
      setup.detector?.(config, clock, livenessPorts, livenessEvents) ??
      new LivenessDetector(config.liveness, clock, livenessPorts, config.id, livenessEvents)
    );
  }

  /** Its datagram endpoint; a gap in a link's sequence ends the run (its results would be wrong). */
  private newEndpoint(config: NodeConfig, sched: Scheduler, tag: number): Endpoint {
    // dilated mode: a node on a single link may run ahead to the stamp of the last frame in (see Endpoint)
    return new Endpoint(sched, config.ports.length, {
      eager: config.ports.length === 1,
      tag,
      listener: {
        promised: () => this.sync?.kick(),
        gap: (port, expected, got) => {
          const p = config.ports[port];
          this.client.send({
            type: 'error',
            fatal: true,
            message: `datagrams lost on link ${config.name}:${port} <- ${p.peer}:${p.peerPort} (expected sequence ${expected}, got ${got}): results would be wrong`,
          });
        },
      },
    });
  }

  /** Conservative mode: the synchronization, telling the orchestrator of each grant reached, halt and pause. */
  private conservativeSync(sched: Scheduler, ports: EgressPort[], endpoint: Endpoint): ConservativeSync {
    return new ConservativeSync(sched, ports, endpoint, {
      // captured frames travel before each barrier, so a node killed at its halt time loses none
      reached: (at) => {
        this.capture?.flush();
        this.client.send({ type: 'reached', at, stats: this.progress() });
      },
      // a killed (or stopped) node's counters up to its halt go before it dies: what it dropped,
      // carried and violated until then is in the summary
      halted: (at) => {
        this.capture?.flush();
        this.haltReport(at);
        this.client.send({ type: 'halted', at });
      },
      paused: (at) => this.client.send({ type: 'paused', at }),
    });
  }

  private progress(): ProgressStats {
    const ctx = this.ctx;
    if (!ctx || !this.role)
      return {
        now: 0,
        flowsDone: 0,
        flowsStarted: 0,
        fidelity: { late99: 0, misses: 0, frames: 0, events: 0 },
      };
    const f = ctx.sched.fidelity;
    const wait = this.sync?.waitingOn();
    return {
      now: this.sync ? this.sync.safeTime() : ctx.sched.now(),
      ...this.role.progress(),
      fidelity: {
        late99: f.lateness.quantile(0.99),
        misses: f.causalityMisses,
        frames: f.framesHandled,
        events: f.eventsHandled,
      },
      ...(wait && { waitPort: wait.port, waitClock: wait.clock }),
    };
  }

  /** the report on its way (stop is idempotent: a signal and the orchestrator's stop may both come) */
  private stopping = false;

  /** the node reported at its halt (a kill or stop): it only waits to be ended */
  private haltReported = false;

  /** its final report is sent: a signal after it ends the process at once */
  private reported = false;

  /**
   * The node stops where it is and reports what it carried up to `at` (its halt time; dilated mode:
   * now); its process is killed or stopped next. A stop or signal after it ends the process at once.
   */
  private haltReport(at?: number): void {
    if (this.stopping || !this.ctx || !this.role) return;
    this.stopping = true;
    this.haltReported = true;
    const report = this.finalReport('halt', at);
    this.capture?.flush();
    this.client.send({ type: 'report', report });
  }

  async stop(why: NodeReport['end']): Promise<void> {
    const ctx = this.ctx;
    if (!ctx || !this.role || this.haltReported || this.reported) {
      this.exit(0);
      return;
    }
    if (this.stopping) return;
    this.stopping = true;
    // whatever happens to the report, the process ends soon: a node never outlives its run
    const deadline = setTimeout(() => this.exit(0), STOP_DEADLINE_MS).unref();
    const report = this.finalReport(why);
    await this.endpoint!.close();
    this.capture?.flush();
    const usage = process.resourceUsage();
    const cpu = process.cpuUsage(this.cpuAtStart);
    ctx.log.info(
      {
        maxRssKb: usage.maxRSS,
        ...privateMemoryKb(),
        cpuUserUs: cpu.user,
        cpuSystemUs: cpu.system,
      },
      'node stopped',
    );
    await this.client.sendAndFlush({ type: 'report', report });
    this.reported = true;
    if (process.env.DCEMU_STAY_AFTER_REPORT === '1' && why !== 'SIGTERM') {
      // its runtime's SIGTERM ends it (stop, above), or the control connection's close
      clearTimeout(deadline);
      setTimeout(() => this.exit(0), STAY_DEADLINE_MS).unref();
      return;
    }
    // the process ends once the other side has read the report (it closes its end when it has): a
    // container's network goes with its process, and a report still in flight with it
    await this.client.close();
    this.exit(0);
  }

  /** Stops every part of the node and gathers its report: its counters, ports, flows and the role's own. */
  private finalReport(why: NodeReport['end'], at?: number): NodeReport {
    const ctx = this.ctx!;
    const role = this.role!;
    const now = at ?? (this.sync ? this.sync.safeTime() : ctx.sched.now());
    ctx.liveness.stop();
    role.stop();
    ctx.sched.stop();
    this.sync?.stop();
    const ep = this.endpoint!;
    const m = ctx.metrics;
    for (const [name, key] of ENDPOINT_COUNTERS) m.inc(name, ep.stats[key]);
    if (this.sync) {
      const sync = this.sync;
      m.inc('syncSteps', sync.steps);
      // wall figures (they differ run to run): what the node spent in steps, and what held it between
      m.inc('syncBusyUs', Math.round(sync.busyUs));
      const held = sync.heldUs;
      for (let p = 0; p < ctx.ports.length; p++)
        if (held[p] > 0) m.inc(`syncHeldUs:${ctx.config.ports[p].peer}`, Math.round(held[p]));
      m.inc('syncHeldUs:grant', Math.round(held[held.length - 1]));
    }
    m.inc('keepalivesSent', ctx.liveness.keepalivesSent);
    // data frames sent on ports still declared down at the end
    for (const [port, n] of this.sentWhileDown.entries()) {
      if (n > 0) m.inc(`sentWhileDown:${ctx.config.ports[port].peer}`, n);
    }
    for (const p of ctx.ports) {
      m.inc('dropsCongestion', p.stats.dropsCongestion);
      m.inc('dropsWireDown', p.wire.droppedDown);
      m.inc('dropsWireLoss', p.wire.droppedLoss);
      m.inc('wireCorrupted', p.wire.corrupted);
      // what the impairments did on the direction toward each peer, named only where they did
      // something (a clean run reports as before)
      for (const [k, v] of Object.entries(p.wire.counts))
        if (v > 0) m.inc(`impair:${k}:${ctx.config.ports[p.index].peer}`, v);
      m.inc('ecnMarks', p.stats.ecnMarks);
    }
    // the role's report first: it adds its own counters to the metrics snapshotted below
    const roleReport = role.report();
    const report: NodeReport = {
      name: ctx.config.name,
      now,
      end: why,
      fidelity: ctx.sched.fidelity.snapshot(),
      metrics: m.snapshot(),
      ports: ctx.ports.map((p) => ({
        index: p.index,
        peer: ctx.config.ports[p.index].peer,
        txFrames: p.stats.txFrames,
        txBytes: p.stats.txBytes,
        drops: p.stats.dropsCongestion,
        ecnMarks: p.stats.ecnMarks,
        maxBytes: p.stats.maxBytes,
      })),
      ...roleReport,
      ...(ctx.sched.computes ? { compute: ctx.sched.computeSnapshot() } : {}),
    };
    return report;
  }

  exit(code: number): void {
    if (this.exiting) return;
    this.exiting = true;
    // what a process of its own leaves to its exit (a pooled one runs on): the node's timers, its
    // sockets and its log file; nothing more is sent
    this.ctx?.sched.stop();
    this.sync?.stop();
    void this.client.close();
    this.endpoint?.closeNow();
    if (this.ctx) closeLogger(this.ctx.log);
    this.end(code);
  }
}

/**
 * What this process costs the machine in memory, beside its RSS: RSS counts the pages of the Node
 * binary and its libraries that every node process shares (~48 MB of Node 24's ~70), where the
 * proportional set size (`pssKb`: shared pages split among their users) and the private pages
 * (`privateKb`) say what one more process takes. From Linux's /proc/self/smaps_rollup; empty elsewhere.
 */
function privateMemoryKb(): { pssKb?: number; privateKb?: number } {
  try {
    const text = readFileSync('/proc/self/smaps_rollup', 'utf8');
    const kb = (field: string): number =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
    const pss = kb('Pss');
    const priv = kb('Private_Clean') + kb('Private_Dirty');
    return Number.isFinite(pss) && Number.isFinite(priv) ? { pssKb: pss, privateKb: priv } : {};
  } catch {
    return {};
  }
}

/**
 * A node's egress ports, with its scheme's disciplines. Loss and corruption draws: one seeded stream
 * per port; a host's send jitter: its own seeded stream. So a run repeats.
 */
function egressPorts(
  config: NodeConfig,
  sched: Scheduler,
  sink: (port: number, frame: Frame) => void,
  setup: RoleSetup,
): EgressPort[] {
  const ports = config.ports.map((p) => {
    const rng = new Rng(config.seed * 131 + p.index);
    const discipline = setup.discipline?.(config, p.index) ?? undefined;
    // each impairment model its own stream (core/fault-filter.ts), apart from the loss and corruption draws
    const streams = (salt: number) => {
      const r = new Rng((config.seed * 4099 + p.index) * 32 + salt + 7_000_003);
      return () => r.next();
    };
    return new EgressPort(p.index, p, sched, sink, discipline, () => rng.next(), streams);
  });
  const send = config.jitter?.send;
  if (send) {
    const rng = new Rng(config.seed * 137 + 1);
    for (const p of ports) p.setLateness(() => draw(send, rng));
  }
  return ports;
}

/**
 * At departure, before the wire filter (a frame a cut wire drops was still sent): data frames are
 * counted for loss accounting (`counts`); PTP frames get their departure stamps (hardware stamps,
 * transparent clocks) when the run has PTP, and every frame when the role watches departures.
 */
function watchDepartures(
  config: NodeConfig,
  role: Role,
  ports: EgressPort[],
  liveness: LinkDetector,
  counts: { txSinceHeard: number[]; sentWhileDown: number[] },
): void {
  const departed = (config.ptp || role.watchesDepartures) && role.departed ? role.departed.bind(role) : null;
  const every = role.watchesDepartures === true;
  for (const p of ports) {
    p.onDepart = (i, f, txStart) => {
      if (f.t === FrameType.Data) {
        counts.txSinceHeard[i]++;
        if (!liveness.up[i]) counts.sentWhileDown[i]++;
      }
      if (departed !== null && (every || f.t === FrameType.Ptp)) departed(i, f, txStart);
    };
  }
}

/**
 * What the endpoint tells the link detector beyond valid frames; returns how long after an arrival a
 * keepalive finds its link up (0: no quiet keepalives).
 */
function wireDetector(
  endpoint: Endpoint,
  live: LinkDetector,
  clock: NodeClock,
  conservative: boolean,
): number {
  // a detector that counts bit transitions hears the frames the wire corrupted, at their arrival
  const garbled = live.garbled?.bind(live);
  if (garbled) endpoint.onGarbled = (port) => garbled(port, clock.now());
  // a keepalive on a link that stays up changes nothing but the detector's clock of it: its arrival
  // runs as a quiet event, which the synchronization neither waits for nor promises around (where
  // node time is physical time, so the detector's deadlines are the arrivals' own)
  if (!(conservative && clock instanceof IdealClock && live instanceof LivenessDetector)) return 0;
  endpoint.quietKeepalive = (port, at, last) => live.staysUp(port, at, last);
  return live.quietDetectNs;
}
