/**
 * What every node process shares: the control connection, the physical clock and scheduler, the UDP
 * endpoint, the egress ports with their wire filters, the liveness detector, logging and the
 * stop/report protocol. A role (host, switch, ...) plugs in through `Role` and sees only its ports,
 * its node clock and the frames addressed to it; the fault layer stays below it.
 */
import { readFileSync } from 'node:fs';
import { KEY_ENV, nodeKey, parseSecret, SECRET_FILE_ENV } from './auth.js';
import { CaptureRecorder } from './capture.js';
import { IdealClock, type NodeClock } from './clock.js';
import { ControlClient, RefusedError } from './control.js';
import type { Discipline } from './discipline.js';
import { EmulatedClock } from './emulated-clock.js';
import { Endpoint, type EndpointStats } from './endpoint.js';
import type { Frame } from './frame.js';
import { FrameType } from './frame.js';
import { type DetectorFactory, type LinkDetector, LivenessDetector } from './liveness.js';
import { closeLogger, createLogger, type Logger } from './log.js';
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
import { CONTROL_LANE, type EventFn, Scheduler } from './scheduler.js';
import { ConservativeSync } from './sync.js';
import { PhysClock } from './time.js';

/** What a role gets to build itself from. */
export interface NodeContext {
  readonly config: NodeConfig;
  readonly sched: Scheduler;
  readonly clock: NodeClock;
  /** the oscillator under an emulated clock (faults reach it), or null for an ideal clock */
  readonly oscillator: Oscillator | null;
  readonly ports: EgressPort[];
  readonly liveness: LinkDetector;
  readonly metrics: Metrics;
  readonly log: Logger;
  /** reports an event to the orchestrator's event log */
  emit(kind: string, t: number, fields?: Record<string, unknown>): void;
}

export interface Role {
  /** a frame for the role arrived on `port` (keepalives are consumed below) */
  onFrame(now: number, port: number, frame: Frame): void;
  /** traffic starts; `at` is the physical time workload offsets count from */
  start(at: number): void;
  portDown(port: number, now: number): void;
  /**
   * a frame sent by this node starts transmission on `port` at physical `txStart`: PTP frames when
   * the run has PTP (departure stamps), every frame when `watchesDepartures` is set
   */
  departed?(port: number, frame: Frame, txStart: number): void;
  /** `departed` wants every frame (a scheme's queue accounting), not only PTP ones */
  readonly watchesDepartures?: boolean;
  portUp(port: number, now: number): void;
  progress(): { flowsDone: number; flowsStarted: number };
  /** a switch: each egress port's queue now, bytes (for the live view's snapshots only) */
  queues?(): number[];
  report(): Pick<
    NodeReport,
    'flows' | 'received' | 'queues' | 'queueHist' | 'clock' | 'scheme' | 'rxFrames' | 'delivered' | 'bySource'
  >;
  stop(): void;
}

export type RoleFactory = (ctx: NodeContext) => Role;

/** A scheme's queue discipline for one egress port of a node (null: strict priority). */
export type DisciplineFactory = (config: NodeConfig, port: number) => Discipline | null;

/**
 * What a node process runs, chosen once its config has arrived: its role, and from its scheme a link
 * failure detector (else the BFD-like one) and its ports' queue disciplines (else strict priority).
 */
export interface RoleSetup {
  role: RoleFactory;
  detector?: DetectorFactory;
  discipline?: DisciplineFactory;
}

/**
 * Entry point of a node process: connects to the orchestrator named in the environment and runs. A
 * pooled process (`DCEMU_POOLED=1`, started by the process runtime's pool for a command of many runs:
 * orchestrator/runtime/pool.ts) runs one node after another instead, each named by its orchestrator
 * over the IPC channel: the next run skips Node's start-up, and its code is already compiled and warm.
 */
export async function runNode(
  kind: string,
  setup: (config: NodeConfig) => Promise<RoleSetup>,
): Promise<void> {
  if (process.env.DCEMU_POOLED === '1' && process.send) {
    servePool(kind, setup);
    return;
  }
  const control = process.env.DCEMU_CONTROL;
  const name = process.env.DCEMU_NODE;
  if (!control || !name) {
    process.stderr.write(
      `dcemu ${kind}: DCEMU_CONTROL and DCEMU_NODE must be set (started by the orchestrator)\n`,
    );
    process.exit(2);
  }
  watchParent();
  // a container's node ends a moment after the one before it in the run (`DCEMU_EXIT_STAGGER_MS`, set
  // by the docker runtime: containers of one network that end together can make the daemon keep it,
  // see STAY_DEADLINE_MS)
  const stagger = Number(process.env.DCEMU_EXIT_STAGGER_MS ?? 0);
  // a compose node's process (`DCEMU_EXIT_DELAY_MS`, set per node by `dcemu compose`) ends that long
  // after its node, whatever ended it: compose stops the containers all at once, and their exits would
  // otherwise reach the daemon together (see STAY_DEADLINE_MS)
  const delay = Number(process.env.DCEMU_EXIT_DELAY_MS ?? 0);
  const exit = (code: number) =>
    delay > 0 ? setTimeout(() => process.exit(code), delay) : process.exit(code);
  const node = await startNode(kind, setup, control, name, stagger, exit);
  if (!node) return;
  // SIGTERM that reaches the node itself (`timeout` or a supervisor signalling the whole process
  // group, `docker stop`): it reports what it carried before it ends, as on the orchestrator's stop,
  // so an interrupted run keeps every node's counters
  process.on('SIGTERM', () => void node.stop('SIGTERM'));
  // Ctrl-C is the orchestrator's to handle: it stops its nodes over the control channel and collects
  // their reports (the process runtime gives each node its own process group; a node started by
  // someone else, under compose, may still share a terminal's)
  process.on('SIGINT', () => {});
}

/**
 * Connects node `name` to its orchestrator at `control` and runs it until it ends, when `end` gets its
 * exit code (null: it could not reach the orchestrator, and `end` has been called).
 */
async function startNode(
  kind: string,
  setup: (config: NodeConfig) => Promise<RoleSetup>,
  control: string,
  name: string,
  stagger: number,
  end: (code: number) => void,
): Promise<NodeProcess | null> {
  const [host, port] = splitHostPort(control);
  let client: ControlClient;
  try {
    client = await connectPatiently(host, port, name);
  } catch (err) {
    process.stderr.write(
      `dcemu ${kind} ${name}: cannot join the run at ${control}: ${(err as Error).message}\n`,
    );
    end(2);
    return null;
  }
  const node = new NodeProcess(client, setup, end);
  // A node never outlives its orchestrator (docs/architecture.md: processes): losing the control channel ends the process
  client.on('close', () => {
    if (stagger > 0) setTimeout(() => node.exit(0), stagger);
    else node.exit(0);
  });
  client.onMessage((m) => node.handle(m));
  return node;
}

/** What a pooled process is told over its IPC channel. */
export type PoolOrder =
  | {
      type: 'assign';
      /** the node's environment: its control address and name, as a process of its own gets them */
      env: Record<string, string>;
    }
  /** the node stops and reports (a pooled process's SIGTERM: one sent to it might reach the next node) */
  | { type: 'stop' }
  | { type: 'end' };

/** What a pooled process tells its pool: its node ended (the exit code a process of its own had). */
export interface PoolReport {
  type: 'released';
  code: number;
}

/**
 * A pooled process: it waits for a node to run, runs it, tells the pool it ended and waits for the
 * next. It ends when told to, when its orchestrator is gone (the IPC channel closes, or its parent
 * changes) or on a SIGTERM between nodes; a node that fails for real (a crash, a kill) ends it too.
 */
function servePool(kind: string, setup: (config: NodeConfig) => Promise<RoleSetup>): void {
  let node: NodeProcess | null = null;
  let running = false;
  let stopAsked = false;
  let envKeys: string[] = [];
  process.on('SIGTERM', () => (node ? void node.stop('SIGTERM') : process.exit(0)));
  process.on('SIGINT', () => {});
  process.on('disconnect', () => process.exit(0));
  watchParent();
  const send = process.send!.bind(process);
  process.on('message', (order: PoolOrder) => {
    if (order.type === 'end') {
      if (!running) process.exit(0);
      return;
    }
    if (order.type === 'stop') {
      // a node still reaching its orchestrator stops as soon as it can
      if (node) void node.stop('SIGTERM');
      else stopAsked = running;
      return;
    }
    if (order.type !== 'assign' || running) return;
    running = true;
    stopAsked = false;
    for (const k of envKeys) delete process.env[k];
    envKeys = Object.keys(order.env);
    Object.assign(process.env, order.env);
    const end = (code: number) => {
      node = null;
      running = false;
      send({ type: 'released', code } satisfies PoolReport);
    };
    void startNode(kind, setup, order.env.DCEMU_CONTROL, order.env.DCEMU_NODE, 0, end).then((n) => {
      if (!running || !n) return;
      node = n;
      if (stopAsked) void n.stop('SIGTERM');
    });
  });
}

/**
 * A node started by the process runtime also ends when its parent, the orchestrator, is gone: even
 * before its control connection is up (an orchestrator killed during start-up), within ~250 ms.
 */
function watchParent(): void {
  const parent = Number(process.env.DCEMU_PARENT_PID);
  if (!(parent > 0)) return;
  const check = setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 250);
  check.unref();
}

/**
 * How long a node keeps trying to reach its orchestrator. Under compose (dcemu compose) nodes start
 * beside the orchestrator, not after it listens; the process and docker runtimes listen first, so there
 * the first attempt succeeds. Bounded, so a node whose orchestrator never comes still ends.
 */
const CONNECT_PATIENCE_MS = 20_000;
const CONNECT_RETRY_MS = 250;
/** failures that mean "not listening (yet)" or "not reachable yet", worth another try */
const RETRYABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EAI_AGAIN']);

async function connectPatiently(host: string, port: number, name: string): Promise<ControlClient> {
  const deadline = Date.now() + CONNECT_PATIENCE_MS;
  const given = takeKey();
  for (;;) {
    try {
      // a run's secret in a file (containers) is read anew on every try: under compose the orchestrator
      // writes its run's secret as it starts, and a node may come up before it did
      const key = given ?? (await keyFromFile(name, deadline));
      return await ControlClient.connect(host, port, name, key);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      const again = RETRYABLE.has(code) || (given === null && err instanceof RefusedError);
      if (!again || Date.now() + CONNECT_RETRY_MS > deadline) throw err;
      await new Promise((r) => setTimeout(r, CONNECT_RETRY_MS));
    }
  }
}

/**
 * The node's key when its environment carries it (the process runtime), removed from the environment
 * at once so nothing the node runs later finds it there; null when it comes from a secret file.
 */
function takeKey(): Buffer | null {
  const hex = process.env[KEY_ENV];
  delete process.env[KEY_ENV];
  if (hex !== undefined) {
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${KEY_ENV} is not a key (64 hex digits)`);
    return Buffer.from(hex, 'hex');
  }
  if (!process.env[SECRET_FILE_ENV])
    throw new Error(`${KEY_ENV} or ${SECRET_FILE_ENV} must be set (started by the orchestrator)`);
  return null;
}

/** node `name`'s key from the run's secret file, waiting for the file until `deadline` */
async function keyFromFile(name: string, deadline: number): Promise<Buffer> {
  const file = process.env[SECRET_FILE_ENV] ?? '';
  for (;;) {
    let text: string | null = null;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || Date.now() + CONNECT_RETRY_MS > deadline)
        throw new Error(`cannot read the run's secret from ${file}: ${(err as Error).message}`);
    }
    if (text !== null) {
      const secret = parseSecret(text);
      if (!secret) throw new Error(`${file} does not hold a run's secret (64 hex digits)`);
      return nodeKey(secret, name);
    }
    await new Promise((r) => setTimeout(r, CONNECT_RETRY_MS));
  }
}

function splitHostPort(s: string): [string, number] {
  const i = s.lastIndexOf(':');
  return [s.slice(0, i), Number(s.slice(i + 1))];
}

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

class NodeProcess {
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
    let quietDetectNs = 0;
    // a keepalive on a link that stays up changes nothing but the detector's clock of it: its arrival
    // runs as a quiet event, which the synchronization neither waits for nor promises around (where
    // node time is physical time, so the detector's deadlines are the arrivals' own)
    if (conservative && clock instanceof IdealClock && live instanceof LivenessDetector) {
      endpoint.quietKeepalive = (port, at, last) => live.staysUp(port, at, last);
      quietDetectNs = live.quietDetectNs;
    }
    // a detector that counts bit transitions hears the frames the wire corrupted, at their arrival
    const garbled = (live as LinkDetector).garbled?.bind(live);
    if (garbled) endpoint.onGarbled = (port) => garbled(port, clock.now());
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
