/**
 * A fabric run, with its lifecycle in the types (docs/conventions.md §8): `Engine.start()` launches every node,
 * waits for them to connect and bind, hands out peer addresses and returns a `StartedEngine`;
 * `StartedEngine.run()` starts traffic, fires the timeline and watches progress until the workload is
 * done or the drain deadline passes; `stop()` (idempotent, also `await using`) collects every node's
 * report and tears the runtime down, leaving no process behind.
 */
import { mkdirSync } from 'node:fs';
import { totalmem } from 'node:os';
import { datagramTag, newSecret, nodeKey } from '../../core/auth.js';
import { type ControlConnection, ControlServer, type Refusal } from '../../core/control.js';
import type { PeerAddress } from '../../core/endpoint.js';
import type { NodeConfig, NodeEvent, NodeMessage, NodeReport, ProgressStats } from '../../core/messages.js';
import { nodeEnv } from '../../core/paths.js';
import { monotonicEpoch, PhysClock } from '../../core/time.js';
import { releasedOnCrash } from '../runtime/crash-removal.js';
import { pods, racks } from '../runtime/placement.js';
import type { ExitInfo, Runtime, RuntimeSite, StartedRuntime, StoppedRuntime } from '../runtime/types.js';
import { NODE_PRIVATE_MB, nodesMemoryMb, type Scenario, type TimelineEvent } from '../scenario/resolve.js';
import { CONTAINER_ACTIONS } from '../scenario/schema.js';
import { userSchemeDir } from '../schemes/index.js';
import { type CaptureFileSummary, CaptureFiles } from './capture.js';
import { RuntimeError } from './errors.js';
import type { FiredFault } from './fired.js';
import { type Plan, planRun } from './plan.js';
import { type Progress, stallDiagnosis } from './progress.js';
import { clockFault, firedRecord, unmatchedStart, wireFaults } from './timeline-actions.js';

/** timeline actions on a node that its runtime carries out (the others travel over the control channel) */
const RUNTIME_ACTIONS: ReadonlySet<string> = new Set(['kill', 'pause', 'resume', ...CONTAINER_ACTIONS]);
/**
 * A node started again by the timeline starts its protocols this long (real ms) after it took its
 * config: time to bind and be told its peers, so it starts on time rather than catching up.
 */
const RESTART_LEAD_MS = 300;
/** dilated mode: how long a killed node has to report what it carried before its process dies, real ms */
const KILL_REPORT_MS = 250;

export { concerns, type FiredFault, REPAIRS } from './fired.js';
export { type Progress, type StallView, stallDiagnosis } from './progress.js';

export interface EngineOptions {
  runtime: Runtime;
  /** results folder; logs go to <out>/logs */
  out: string;
  /** how long nodes get to connect and bind, real ms */
  startTimeoutMs?: number;
  /** labels every process of the run; default a fresh `dcemu-<pid>-<random>` */
  runId?: string;
  /** start even when the nodes need more memory than this machine has */
  force?: boolean;
}

/**
 * Why this machine cannot hold the scenario's node processes (~NODE_PRIVATE_MB each beside the pages
 * they share, against 90% of its memory), or null when it can: checked before anything starts, and by
 * `dcemu validate`.
 */
export function memoryProblem(scenario: Scenario): string | null {
  const nodes = scenario.topology.nodes.length;
  const needMb = nodesMemoryMb(nodes);
  const haveMb = totalmem() / 2 ** 20;
  if (needMb <= 0.9 * haveMb) return null;
  return `${nodes} nodes need ~${(needMb / 1024).toFixed(1)} GB of memory (~${NODE_PRIVATE_MB} MB per process); this machine has ${(haveMb / 1024).toFixed(1)} GB`;
}

/**
 * Why the scenario cannot start on this runtime (one line naming the file, and the timeline line where
 * there is one), or null: checked before anything starts or is written, by `Engine.start` and by the
 * command line before it announces the run.
 */
export function startRefusal(scenario: Scenario, runtime: Runtime, force = false): string | null {
  // every node is a process of ~NODE_PRIVATE_MB of its own: a fabric the machine cannot hold is refused up front
  const tooBig = !runtime.remoteNodes && !force ? memoryProblem(scenario) : null;
  if (tooBig) return `${scenario.file}: ${tooBig}: use --force to start anyway`;
  // container faults need containers, naming the timeline line
  const needs = scenario.timeline.find((e) => CONTAINER_ACTIONS.has(e.action));
  if (needs && !runtime.containerFaults)
    return `${scenario.file}:${needs.line}: action ${needs.action} needs a container runtime, --runtime docker or swarm (the ${runtime.kind} runtime has no containers)`;
  // a scheme of the user's own: its parts are a file of this machine, which nodes must see
  if (userSchemeDir(scenario.scheme.kind) !== undefined && !runtime.hostFiles)
    return `${scenario.file}: scheme ${scenario.scheme.kind} comes from a module of yours (scheme.module): it runs on the process and docker runtimes; the ${runtime.kind} runtime's containers hold only dcemu's own schemes`;
  // conservative mode waits at a `start` for the node's new process: there must be one to wait for
  const orphan = scenario.sync === 'conservative' ? unmatchedStart(scenario.timeline) : undefined;
  if (orphan)
    return `${scenario.file}:${orphan.line}: start of ${orphan.node} at ${orphan.at} ns: the node was not stopped before (a stop must come first)`;
  return null;
}

/** A fresh run id: `dcemu-<orchestrator pid>-<6 random letters>`. */
export function newRunId(): string {
  return `dcemu-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Conservative mode: no barrier for this long (wall) means the fabric is stuck; the run fails naming the holder. */
const STALL_MS = 60_000;

/** Event order in results: time, then node name; a node's own events keep their order (a stable sort). */
function byTimeNode(x: NodeEvent, y: NodeEvent): number {
  return x.t - y.t || (x.node < y.node ? -1 : x.node > y.node ? 1 : 0);
}

export class Engine {
  constructor(
    readonly scenario: Scenario,
    private readonly opts: EngineOptions,
  ) {}

  /**
   * Starts every node and waits until all are ready. An abort of `signal` ends the wait early: the
   * started fabric then holds what had started, for `stop()` to collect (no traffic ran).
   */
  async start(signal?: AbortSignal): Promise<StartedEngine> {
    const runtime = this.opts.runtime;
    const refused = startRefusal(this.scenario, runtime, this.opts.force);
    if (refused) throw new RuntimeError(refused);
    const logDir = `${this.opts.out}/logs`;
    mkdirSync(logDir, { recursive: true });
    const epoch = monotonicEpoch();
    const runId = this.opts.runId ?? newRunId();
    const schemeDir = userSchemeDir(this.scenario.scheme.kind);
    // what the site made (a container runtime's network, relay and containers) is removed should the
    // orchestrator crash before its teardown
    const site = releasedOnCrash(
      await runtime.prepare(
        this.scenario.topology.nodes.map((n) => n.name),
        runId,
        racks(this.scenario.topology),
        pods(this.scenario.topology),
      ),
    );
    // the run's secret (core/auth.ts): only its nodes get keys derived from it; an attached runtime's
    // nodes are started by someone else, who shares the site's secret with them
    const secret = site.secret ?? newSecret();
    const planned = new Set(this.scenario.topology.nodes.map((n) => n.name));
    const server = new ControlServer((name) => (planned.has(name) ? nodeKey(secret, name) : undefined));
    let capture: CaptureFiles | null = null;
    let controlPort: number;
    let plan: ReturnType<typeof planRun>;
    try {
      plan = planRun(this.scenario, { epoch, bindHost: site.bindHost, logDir });
      if (site.nodePort !== undefined) for (const c of plan.nodes) c.bindPort = site.nodePort;
      controlPort = await server.listen(site.controlHost, site.controlPort);
      if (this.scenario.run.capture.length > 0)
        capture = new CaptureFiles(
          `${this.opts.out}/capture`,
          this.scenario.topology,
          plan.nodes,
          (message) => started.captureFailed(message),
          `dcemu scenario ${this.scenario.name}: fabric time, virtual ns since traffic start`,
        );
    } catch (err) {
      await server.close();
      await site.release();
      throw err;
    }
    const started: StartedEngine = new StartedEngine(
      this.scenario,
      plan,
      new PhysClock(epoch, this.scenario.tdf),
      server,
      runId,
      site,
      capture,
      datagramTag(secret),
    );
    try {
      const runtime = await this.opts.runtime.start(
        plan.nodes.map((n) => ({
          name: n.name,
          runId,
          role: n.kind,
          logDir,
          secret,
          env: nodeEnv(site.controlAddress ?? `${site.controlHost}:${controlPort}`, n.name),
          cpuBound: this.scenario.sync === 'conservative',
          ...(schemeDir !== undefined && { schemeDir }),
        })),
        signal,
      );
      await started.attach(runtime, this.opts.startTimeoutMs ?? 30_000, signal);
    } catch (err) {
      await started.stop();
      throw err;
    }
    return started;
  }
}

/** Why a node sent no report; `cutShort`: an interrupt ended the run's start-up. */
function noReport(n: NodeState, cutShort: boolean): string {
  if (n.killed) return 'killed by the timeline';
  if (n.stopped) return 'stopped by the timeline';
  if (n.crashed !== null) return `crashed (${n.crashed})`;
  // its process never started, or had not taken its part when the interrupt came
  if (cutShort)
    return n.conn === null && !n.exited
      ? 'not started: the start-up was interrupted'
      : 'stopped while starting: the start-up was interrupted';
  return n.exited ? 'exited early' : 'no report';
}

/** One conservative advance (a `run` or a `runFor`): where it goes, and how it is doing. */
interface Leg {
  /** physical ns of the traffic start: targets, the workload's end and the timeline count from it */
  base: number;
  /** where the leg ends, physical ns */
  end: number;
  /** from when the workload may be done, physical ns */
  doneFrom: number;
  untilDone: boolean;
  /** the grant the nodes run to now */
  grant: number;
  lastProgressWall: number;
  lastProgressNs: number;
  signal?: AbortSignal;
  finish: () => void;
}

/** Conservative mode: whether `n` still holds the fabric below `t` (live, and has not reached it). */
function holdsBack(n: NodeState, t: number): boolean {
  return !(n.halted || n.killed || n.exited || n.reached >= t || (n.pausedUntil >= 0 && n.pausedUntil >= t));
}

/** The start-up under way: nodes not yet ready, and how `attach`'s wait ends. */
interface StartUp {
  pending: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

interface NodeState {
  config: NodeConfig;
  conn: ControlConnection | null;
  /** where the node's socket is bound (it says so in `ready`): its peers send there */
  udpHost: string;
  udpPort: number;
  /** its `ready`'s quiet keepalives (core/messages.ts), passed on to its peers with its address */
  quietDetectNs: number;
  killed: boolean;
  exited: boolean;
  /** stopped by the timeline (`stop`): its exit is expected */
  stopped: boolean;
  /** started again by the timeline (`start`): its next connection replaces the closed one */
  restarting: boolean;
  /** physical time a restarted node starts its protocols and flows */
  restartAt: number;
  /** taken off the fabric network by the timeline (`disconnect`) and not connected since */
  disconnected: boolean;
  /** conservative mode: the latest grant the node reported reaching */
  reached: number;
  /** conservative mode: the node stopped at its `kill` time (its process is killed next) */
  halted: boolean;
  /** conservative mode: its halt is a `stop` (the container is stopped, not killed) */
  haltIsStop: boolean;
  /** conservative mode: the `docker stop` under way after its halt */
  stopping: Promise<void> | null;
  /** conservative mode: virtual times the timeline starts it again, earliest first */
  restarts: number[];
  /** conservative mode: the restart under way (docker start, config, peers relinking) */
  restartBusy: boolean;
  /** conservative mode: peers still to start a new link session with the restarted process */
  relinks: number;
  /** conservative mode: stopped for real (SIGSTOP) while its pause lasts, until this virtual time */
  pausedUntil: number;
  /** its report: the last process's at the end, or what it carried up to its halt (a kill or stop) */
  report: NodeReport | null;
  /** the reports of its earlier processes (a `stop` then `start`), each up to its halt */
  earlier: NodeReport[];
  /** dilated mode: called when the node's report at a `kill` comes */
  onKillReport: (() => void) | null;
  stats: ProgressStats | null;
  /** a switch's egress queues at its last snapshot (`reached` carries none) */
  queues: number[] | null;
  /** wall ms its stats last came */
  statsWall: number;
  /** conservative mode: events it had handled when the fabric last moved (a barrier) */
  eventsAtBarrier: number;
  /** why its process ended unplanned (a crash, a signal from outside the run), if it did */
  crashed: string | null;
}

export interface FabricResult {
  runId: string;
  scenario: Scenario;
  plan: Plan;
  trafficStart: number;
  endNs: number;
  wallMs: number;
  reports: NodeReport[];
  events: NodeEvent[];
  faults: FiredFault[];
  processes: StoppedRuntime;
  /** nodes whose report is missing, with why */
  missing: Array<{ node: string; reason: string }>;
  /** nodes whose process ended unplanned, with when (virtual ns since traffic start) and why */
  crashes: Array<{ node: string; t: number; reason: string }>;
  /** control connections turned away (a stranger, a wrong proof, a node already connected) */
  refusals: Array<Refusal & { wallMs: number }>;
  /** the run was cut short (Ctrl-C, SIGTERM, an aborted library run): by what, and where */
  interrupted?: { by: string; atNs: number; during: 'start-up' | 'traffic' };
  /** virtual time the run reached, ns since traffic start (conservative mode: its last barrier) */
  reachedNs: number;
  /** the pcapng files written (`run.capture`), if any */
  capture?: CaptureFileSummary[];
}

export class StartedEngine implements AsyncDisposable {
  private runtime: StartedRuntime | null = null;
  private readonly nodes = new Map<string, NodeState>();
  readonly events: NodeEvent[] = [];
  readonly faults: FiredFault[] = [];
  private trafficStart = 0;
  private readonly wallStart = Date.now();
  private stopping: Promise<FabricResult> | null = null;
  private timers: NodeJS.Timeout[] = [];
  /** conservative mode: the last grant sent (absolute virtual ns) */
  private granted = 0;
  /** conservative mode: called when a node reports reaching a grant, halting or pausing */
  private onBarrier: (() => void) | null = null;
  /**
   * conservative mode: hold the fabric at the first barrier at or after this virtual time (ns since
   * traffic start; a live view's pause or step), and the barrier it is held at
   */
  private holdAt: number | null = null;
  private heldAt: number | null = null;
  /** why the run failed (lost datagrams, a stalled fabric), if it did */
  failure: string | null = null;

  constructor(
    readonly scenario: Scenario,
    readonly plan: Plan,
    readonly clock: PhysClock,
    private readonly server: ControlServer,
    readonly runId: string,
    private readonly site: RuntimeSite,
    private readonly capture: CaptureFiles | null = null,
    /** the run's datagram tag, given to each node with its config */
    private readonly tag = 0,
  ) {
    server.on('refused', (r) => this.refused(r));
    // nodes may connect while the runtime is still starting others (containers start over seconds):
    // keep them until `attach` takes over
    server.on('connection', this.early);
    for (const c of plan.nodes) {
      this.nodes.set(c.name, {
        config: c,
        conn: null,
        udpHost: '',
        udpPort: 0,
        quietDetectNs: 0,
        killed: false,
        exited: false,
        stopped: false,
        restarting: false,
        restartAt: 0,
        disconnected: false,
        reached: -1,
        halted: false,
        haltIsStop: false,
        stopping: null,
        restarts: [],
        restartBusy: false,
        relinks: 0,
        pausedUntil: -1,
        report: null,
        earlier: [],
        onKillReport: null,
        stats: null,
        queues: null,
        statsWall: 0,
        eventsAtBarrier: 0,
        crashed: null,
      });
    }
  }

  private readonly refusals: FabricResult['refusals'] = [];

  /** A control connection was turned away: counted, and the run goes on as if it had never come. */
  private refused(r: Refusal): void {
    this.refusals.push({ ...r, wallMs: Date.now() - this.wallStart });
  }

  private readonly earlyConnections: ControlConnection[] = [];
  private readonly early = (conn: ControlConnection): void => {
    this.earlyConnections.push(conn);
  };

  /**
   * Waits until every node has connected, taken its config and bound its socket; sends peers. An abort
   * of `signal` ends the wait (the nodes that connected are collected by `stop`).
   */
  async attach(runtime: StartedRuntime, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    this.runtime = runtime;
    const ready = new Promise<void>((resolve, reject) => {
      const startUp: StartUp = { pending: this.nodes.size, resolve, reject };
      runtime.onExit((info) => this.exited(info, startUp));
      this.server.off('connection', this.early);
      this.server.on('connection', (conn) => this.accept(conn, startUp));
      for (const conn of this.earlyConnections.splice(0)) this.accept(conn, startUp);
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const missing = [...this.nodes.values()].filter((n) => n.udpPort === 0).map((n) => n.config.name);
        reject(
          new RuntimeError(
            `nodes not ready after ${timeoutMs} ms: ${missing.slice(0, 8).join(', ')}${missing.length > 8 ? ' ...' : ''}`,
          ),
        );
      }, timeoutMs);
    });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<void>((resolve) => {
      onAbort = () => resolve();
      if (signal?.aborted) resolve();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([ready, timeout, aborted]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
    // an interrupted start-up: nodes that never hear their peers are stopped and collected as they are
    if (signal?.aborted) {
      ready.catch(() => {});
      return;
    }
    for (const n of this.nodes.values()) n.conn!.send({ type: 'peers', peers: this.peersOf(n) });
  }

  /** A node's process ended: planned (a kill, a stop, the run's end) or a crash. */
  private exited(info: ExitInfo, startUp: StartUp): void {
    const n = this.nodes.get(info.name);
    if (!n) return;
    n.exited = true;
    if (n.killed || n.stopped || this.stopping) return;
    // a node that reported on a SIGTERM of its own was ended from outside the run; any other
    // unplanned exit is a crash (scheme code that threw, an OOM kill, a SIGKILL)
    const why =
      n.report?.end === 'SIGTERM'
        ? 'ended by a SIGTERM from outside the run'
        : info.signal
          ? `signal ${info.signal}`
          : `exit code ${info.code}`;
    if (n.udpPort === 0)
      startUp.reject(
        new RuntimeError(
          `node ${info.name} exited during start-up (${why}); see ${info.name}.stderr in the logs folder`,
        ),
      );
    else this.crash(n, why);
  }

  /** A node's control connection: refused unless it is the run's node's first (or a restarted one's). */
  private accept(conn: ControlConnection, startUp: StartUp): void {
    const n = this.nodes.get(conn.name);
    // one connection per node; a second one only from a node the timeline started again
    if (!n || (n.conn && !(n.restarting && n.conn.closed))) {
      const reason = n ? `'${conn.name}' is already connected` : `'${conn.name}' is not a node of this run`;
      this.refused({ peer: conn.peer, name: conn.name, reason });
      conn.refuse(reason);
      return;
    }
    const rejoining = n.conn !== null;
    n.conn = conn;
    this.runtime?.nodeConnected?.(conn.name, conn);
    conn.on('message', (m) => this.onMessage(n, m, rejoining, startUp));
    conn.send({ type: 'config', config: rejoining ? this.restartConfig(n) : n.config, tag: this.tag });
  }

  /** What a node tells the orchestrator over its control connection. */
  private onMessage(n: NodeState, m: NodeMessage, rejoining: boolean, startUp: StartUp): void {
    switch (m.type) {
      case 'ready':
        n.quietDetectNs = typeof m.quietDetectNs === 'number' ? m.quietDetectNs : 0;
        if (rejoining) this.rejoin(n, m.udpHost, m.udpPort);
        else {
          n.udpHost = m.udpHost;
          n.udpPort = m.udpPort;
          if (--startUp.pending === 0) startUp.resolve();
        }
        break;
      case 'event':
        this.record({ ...m.event, t: m.event.t - this.trafficStart });
        break;
      case 'reached':
        n.reached = m.at;
        n.stats = m.stats;
        n.statsWall = performance.now();
        this.onBarrier?.();
        break;
      case 'halted':
        this.halted(n);
        break;
      case 'relinked': {
        // a peer started a new link session with a restarted node: when all have, it may speak
        const restarted = this.nodes.get(n.config.ports[m.port]?.peer ?? '');
        if (restarted && --restarted.relinks === 0) this.rejoinConservative(restarted);
        break;
      }
      case 'paused': {
        // stopped for real only while its pause outlasts the time granted: a pause that ends
        // inside the grant must run on to it, and nothing would wake the process before the
        // next barrier, which waits on its promises
        const end = this.pauseEnd(n.config.name, m.at);
        if (this.runtime && n.pausedUntil < 0 && end >= this.granted) {
          n.pausedUntil = end;
          void this.runtime.pause(n.config.name).catch(() => {});
        }
        this.onBarrier?.();
        break;
      }
      case 'peer-gone':
        // where the crashed peer's influence ended: the furthest promise any neighbour had of it
        this.crashSeen(n.config.ports[m.port]?.peer ?? '', m.at - this.trafficStart);
        break;
      case 'stats':
        n.stats = m.stats;
        n.queues = m.stats.queues ?? null;
        n.statsWall = performance.now();
        break;
      case 'report':
        this.reported(n, m.report);
        break;
      case 'capture':
        this.capture?.write(n.config.name, m.records, m.dropped, this.trafficStart);
        break;
      case 'error':
        if (m.fatal) this.fail(`${n.config.name}: ${m.message}`);
        this.record({ t: this.relNow(), kind: 'node-error', node: n.config.name, message: m.message });
        // a node that cannot configure itself will never be ready: say why now, not at the timeout
        if (n.udpPort === 0)
          startUp.reject(
            new RuntimeError(`node ${n.config.name} failed to start: ${m.message.split('\n')[0]}`),
          );
        break;
    }
  }

  /**
   * Conservative mode: the node stopped at its kill or stop time and its links fell silent; now its
   * process dies for real (`stop`: its container is stopped, to be started again).
   */
  private halted(n: NodeState): void {
    n.halted = true;
    if (n.haltIsStop && this.runtime?.containers) {
      n.stopped = true;
      n.stopping = this.runtime.containers.stopNode(n.config.name).catch(() => {});
    } else if (this.runtime && !n.killed) {
      n.killed = true;
      void this.runtime.kill(n.config.name).catch(() => {});
    }
    this.onBarrier?.();
  }

  /** A node's report: at the run's end, or what a killed or stopped node carried up to its halt. */
  private reported(n: NodeState, report: NodeReport): void {
    if (report.end === 'halt') {
      // what a killed or stopped node carried up to its halt (a restarted one reports anew)
      n.report = report;
      n.onKillReport?.();
    } else if (n.stopped) {
      // dilated mode: `docker stop`'s SIGTERM made a stopped node report up to its stop
      n.report = { ...report, end: 'halt' };
    } else if (!n.killed) {
      if (n.report?.end === 'halt') n.earlier.push(n.report);
      n.report = report;
    }
  }

  private peersOf(n: NodeState): Array<PeerAddress | null> {
    return n.config.ports.map((p) => {
      const peer = this.nodes.get(p.peer)!;
      return {
        host: peer.udpHost,
        port: peer.udpPort,
        peerPort: p.peerPort,
        quietDetectNs: peer.quietDetectNs,
      };
    });
  }

  /**
   * The config of a node started again by the timeline. It starts at `restartAt`, not at the run's
   * traffic start: a node started in the past would replay the run from there (keepalives, samples,
   * flows). So a restarted host does not replay its past: it sources only the flows planned to start
   * after it is back, at their planned times (offsets re-based on `restartAt`). Flows it had started,
   * and their records, died with the old process, as on a real reboot.
   */
  private restartConfig(n: NodeState): NodeConfig {
    // conservative mode: exactly at the timeline's `start` (the fabric waits there for it)
    n.restartAt =
      this.scenario.sync === 'conservative'
        ? n.restarts[0]
        : this.clock.now() + this.clock.virtualNs(RESTART_LEAD_MS);
    const config = n.config;
    if (!config.flows) return config;
    const shift = n.restartAt - this.trafficStart;
    const flows = config.flows.filter((f) => f.start >= shift).map((f) => ({ ...f, start: f.start - shift }));
    return { ...config, flows };
  }

  /**
   * A restarted node connected, took its config and bound its socket: it gets its peers, then its
   * start (`restartAt`, see restartConfig). Neighbours learn its address again only if it changed
   * (runtimes without a fixed node port; a swarm task started again gets a new address).
   */
  private rejoin(n: NodeState, udpHost: string, udpPort: number): void {
    const moved = udpPort !== n.udpPort || udpHost !== n.udpHost;
    n.udpHost = udpHost;
    n.udpPort = udpPort;
    n.restarting = false;
    n.stopped = false;
    n.killed = false;
    n.exited = false;
    n.stats = null;
    n.queues = null;
    if (this.scenario.sync === 'conservative') {
      // its peers start new link sessions with it first (their old ones died with the old process);
      // it speaks once all have (rejoinConservative)
      n.relinks = n.config.ports.length;
      for (const p of n.config.ports) {
        const peer = this.nodes.get(p.peer)!;
        if (moved) peer.conn?.send({ type: 'peers', peers: this.peersOf(peer) });
        peer.conn?.send({ type: 'relink', port: p.peerPort });
      }
      if (n.relinks === 0) this.rejoinConservative(n);
      return;
    }
    if (moved) {
      for (const p of n.config.ports) {
        const peer = this.nodes.get(p.peer)!;
        if (peer.conn && !peer.conn.closed) peer.conn.send({ type: 'peers', peers: this.peersOf(peer) });
      }
    }
    n.conn!.send({ type: 'peers', peers: this.peersOf(n) });
    n.conn!.send({ type: 'start', at: n.restartAt });
    this.record({ t: this.relNow(), kind: 'node-restarted', node: n.config.name, udpPort });
  }

  /**
   * Conservative mode: every peer of a restarted node has a new link session with it: it gets its
   * peers, its start (the timeline's time) and the grant, and the fabric moves on from the barrier
   * where it waited for it.
   */
  private rejoinConservative(n: NodeState): void {
    n.restarts.shift();
    n.halted = false;
    n.haltIsStop = false;
    n.restartBusy = false;
    n.reached = this.barrier;
    n.conn!.send({ type: 'peers', peers: this.peersOf(n) });
    n.conn!.send({ type: 'start', at: n.restartAt });
    if (this.granted > this.barrier) n.conn!.send({ type: 'grant', until: this.granted });
    this.record({ t: this.relNow(), kind: 'node-restarted', node: n.config.name, udpPort: n.udpPort });
    this.onBarrier?.();
  }

  /** Conservative mode: the fabric reached a node's restart time: its container is started again. */
  private restartConservative(n: NodeState): void {
    if (n.restartBusy) return;
    n.restartBusy = true;
    const c = this.runtime?.containers;
    if (!c) {
      this.fail(`${n.config.name}: a start needs a container runtime`);
      return;
    }
    void (async () => {
      await n.stopping;
      n.stopping = null;
      // its next control connection is the restarted process: accepted, configured, relinked, started
      n.restarting = true;
      await c.startNode(n.config.name);
    })().catch((err) =>
      this.fail(`${n.config.name}: start failed: ${(err as Error).message.split('\n')[0]}`),
    );
  }

  /**
   * A node's process ended unplanned. The run goes on without it, as after a kill where its peers'
   * view of it ended: in conservative mode each peer's link from it ends at the last promise it sent
   * (`peer-gone`), so the fabric never waits for a process that is gone. Such a run is not
   * reproducible (the crash came at a wall-clock moment), and its summary and events say so.
   */
  private crash(n: NodeState, why: string): void {
    if (n.crashed !== null) return;
    n.crashed = why;
    // conservative mode: at least as far as the fabric and the node's last snapshot had come; its
    // neighbours' last promises of it move this on (crashSeen)
    const t =
      this.scenario.sync === 'conservative'
        ? Math.max(this.barrier, n.stats?.now ?? 0) - this.trafficStart
        : this.relNow();
    const crash = { node: n.config.name, t, reason: why };
    this.crashes.push(crash);
    const event: NodeEvent = {
      t,
      kind: 'node-crashed',
      node: n.config.name,
      reason: why,
      reproducible: false,
    };
    this.record(event);
    // the failure accounting treats it as a kill at that moment (flows through it failed for a reason)
    const fault: FiredFault = { t, at: t, action: 'crash', node: n.config.name, detail: { reason: why } };
    this.faults.push(fault);
    this.crashRecords.set(n.config.name, { crash, event, fault });
    if (this.scenario.sync !== 'conservative') return;
    n.halted = true;
    for (const p of n.config.ports)
      this.nodes.get(p.peer)?.conn?.send({ type: 'peer-gone', port: p.peerPort });
    this.onBarrier?.();
  }

  /** A neighbour's link from crashed `node` ended at `t`: the crash's time is the latest such end. */
  private crashSeen(node: string, t: number): void {
    const r = this.crashRecords.get(node);
    if (!r || !Number.isFinite(t) || t <= r.crash.t) return;
    r.crash.t = t;
    r.event.t = t;
    r.fault.t = t;
    r.fault.at = t;
  }

  /** nodes whose process ended unplanned */
  private readonly crashes: FabricResult['crashes'] = [];
  /** each crash's records, whose time the neighbours' answers move on */
  private readonly crashRecords = new Map<
    string,
    { crash: FabricResult['crashes'][number]; event: NodeEvent; fault: FiredFault }
  >();
  /** what cut the run short, if anything did */
  private interruption: FabricResult['interrupted'];

  /**
   * The run is being cut short (the command line's Ctrl-C or SIGTERM): the teardown that follows says
   * so, and where, in the results.
   */
  interrupt(by: string): void {
    this.interruption ??= { by, atNs: Math.round(this.now()), during: this.begun ? 'traffic' : 'start-up' };
  }

  private relNow(): number {
    if (this.scenario.sync === 'conservative') return this.barrier - this.trafficStart;
    return this.clock.now() - this.trafficStart;
  }

  /** the run cannot give right results any more: it ends, and says why */
  private fail(message: string): void {
    this.failure ??= message;
    this.onBarrier?.();
  }

  /**
   * conservative mode: the barrier every live node has reached, in the nodes' physical time (traffic
   * starts at `trafficStart`: 0, or the end of the PTP warm-up)
   */
  private barrier = 0;

  /** where a pause of `node` that starts at `from` ends: its next `resume`, or the end of the run */
  private pauseEnd(node: string, from: number): number {
    const rel = from - this.trafficStart;
    const resume = this.scenario.timeline.find((e) => e.action === 'resume' && e.node === node && e.at > rel);
    return (resume ? resume.at : this.endNs) + this.trafficStart;
  }

  private record(e: NodeEvent): void {
    this.events.push(e);
  }

  /** Writing a capture failed (a full disk): the run goes on without it, and says so. */
  captureFailed(message: string): void {
    this.record({ t: this.relNow(), kind: 'capture-failed', node: 'orchestrator', message });
  }

  get endNs(): number {
    return this.scenario.workload.durationNs + this.scenario.run.drainNs;
  }

  /** traffic started (by `run` or the first `runFor`) */
  private begun = false;
  private ended = false;
  /** conservative mode: timeline actions delivered ahead whose time has not passed yet, by time */
  private pendingFaults: TimelineEvent[] = [];

  /** Starts traffic (once) and schedules the timeline. */
  private begin(): void {
    if (this.begun) return;
    this.begun = true;
    const sc = this.scenario;
    // PTP's warm-up (ptp.warmup): the clocks synchronize that long before traffic starts
    const warmup = sc.ptp?.warmupNs ?? 0;
    if (sc.sync === 'conservative') {
      this.trafficStart = warmup;
    } else {
      // a start far enough ahead that the message reaches every (possibly busy) node first: 200 ms real
      this.trafficStart = this.clock.now() + this.clock.virtualNs(200) + warmup;
    }
    for (const n of this.live()) n.conn!.send({ type: 'start', at: this.trafficStart });
    this.record({ t: 0, kind: 'traffic-start', node: 'orchestrator', flows: this.plan.flows.length });
    this.schedule(sc.timeline);
  }

  /**
   * Timeline actions on their way: conservative mode sends them to their nodes now, to take effect at
   * their exact times; dilated mode fires each on a timer.
   */
  private schedule(events: TimelineEvent[]): void {
    if (this.scenario.sync === 'conservative') {
      for (const ev of events) this.deliverAhead(ev);
      this.pendingFaults.push(...events);
      this.pendingFaults.sort((x, y) => x.at - y.at);
      return;
    }
    for (const ev of events) {
      const delay = this.clock.realMs(this.trafficStart + ev.at - this.clock.now());
      this.timers.push(setTimeout(() => void this.fire(ev), Math.max(0, delay)));
    }
  }

  /**
   * Starts traffic and runs until every flow is done (after the workload window) or the drain
   * deadline; fires the timeline on the way. `onProgress` is called about twice a second.
   */
  async run(onProgress: (p: Progress) => void = () => {}, signal?: AbortSignal): Promise<void> {
    this.begin();
    await this.advance(this.endNs, true, onProgress, signal);
    this.end();
  }

  /**
   * Starts traffic if it has not started and runs `ns` of virtual time further, whether or not the
   * workload is done (the library's `runFor`).
   */
  async runFor(
    ns: number,
    onProgress: (p: Progress) => void = () => {},
    signal?: AbortSignal,
  ): Promise<void> {
    if (!(ns >= 0)) throw new RangeError(`runFor: expected a duration >= 0 ns, got ${ns}`);
    this.begin();
    await this.advance(this.now() + ns, false, onProgress, signal);
  }

  /**
   * Conservative mode: hold the fabric at the first barrier at or after `atNs` (virtual ns since
   * traffic start; barriers lie on the grid of `run.step`), or nowhere (null). A held fabric's nodes
   * wait for their next grant; holding never changes what they compute, only when. Moving the hold
   * past the barrier the fabric is held at lets it go on (a step); `resume` is `hold(null)`.
   */
  hold(atNs: number | null): void {
    if (this.scenario.sync !== 'conservative')
      throw new RuntimeError(
        'hold: only a conservative run can be held (dilated time runs on the wall clock)',
      );
    if (atNs !== null && !(atNs >= 0)) throw new RuntimeError(`hold: expected a time >= 0 ns, got ${atNs}`);
    this.holdAt = atNs;
    if (this.heldAt !== null && (atNs === null || atNs > this.heldAt)) {
      this.heldAt = null;
      this.onBarrier?.();
    }
  }

  /** The switches' egress queues at their last snapshot (every ~500 ms of wall time), largest first. */
  queuesNow(max = 10): Array<{ port: string; bytes: number }> {
    const out: Array<{ port: string; bytes: number }> = [];
    for (const n of this.nodes.values()) {
      const q = n.queues;
      if (!q || n.killed || n.exited) continue;
      q.forEach((bytes, i) => {
        if (bytes > 0) out.push({ port: `${n.config.name}:${i}→${n.config.ports[i]?.peer ?? '?'}`, bytes });
      });
    }
    return out.sort((a, b) => b.bytes - a.bytes || (a.port < b.port ? -1 : 1)).slice(0, max);
  }

  /** Where a live view's hold keeps the fabric: the barrier it waits at, or null while it runs. */
  held(): number | null {
    return this.heldAt;
  }

  /** Virtual time the fabric has reached, ns since traffic start (0 before it starts). */
  now(): number {
    return this.begun ? Math.max(0, this.relNow()) : 0;
  }

  /**
   * Timeline actions added while the fabric runs (the library's `inject`): each at its `at`, which may
   * not be in the past. A pause needs its resume in the same call (or it lasts to the end).
   */
  inject(events: TimelineEvent[]): void {
    if (this.stopping) throw new RuntimeError('inject: the fabric is stopped');
    this.begin();
    const now = this.now();
    for (const ev of events) {
      if (ev.at < now)
        throw new RuntimeError(
          `inject: ${ev.action} at ${ev.at} ns is in the past (the fabric is at ${Math.floor(now)} ns)`,
        );
      if (CONTAINER_ACTIONS.has(ev.action) && !this.runtime?.containers)
        throw new RuntimeError(`inject: action ${ev.action} needs the docker runtime`);
    }
    const orphan =
      this.scenario.sync === 'conservative'
        ? unmatchedStart([...this.scenario.timeline, ...events])
        : undefined;
    if (orphan && events.includes(orphan))
      throw new RuntimeError(
        `inject: start of ${orphan.node} at ${orphan.at} ns: the node was not stopped before`,
      );
    this.scenario.timeline.push(...events);
    this.schedule(events);
  }

  private end(): void {
    if (this.ended || !this.begun) return;
    this.ended = true;
    this.record({ t: this.relNow(), kind: 'traffic-end', node: 'orchestrator' });
  }

  private advance(
    target: number,
    untilDone: boolean,
    onProgress: (p: Progress) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    if (this.scenario.sync === 'conservative')
      return this.advanceConservative(target, untilDone, onProgress, signal);
    const sc = this.scenario;
    const total = this.plan.flows.length;
    return new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        for (const n of this.live()) n.conn!.send({ type: 'snapshot' });
        const p = this.progress();
        onProgress(p);
        const done = untilDone && p.virtualNs >= sc.run.doneFromNs && p.flowsDone >= total;
        if (done || p.virtualNs >= target || signal?.aborted) {
          clearInterval(tick);
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }
      }, 500);
      const onAbort = () => {
        clearInterval(tick);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Conservative mode (docs/architecture.md: conservative and dilated time): traffic starts at physical time 0; every timeline action reaches
   * its nodes ahead with its time; then the orchestrator grants the nodes time in steps of `run.step`
   * up to `target`, and after each step, when every node has handled everything before it, checks
   * whether the workload is done (`untilDone`). The run therefore stops at a barrier, an exact
   * virtual time, whatever the machine's load: the results are the same bytes every time.
   */
  private async advanceConservative(
    target: number,
    untilDone: boolean,
    onProgress: (p: Progress) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    if (this.failure) throw new RuntimeError(this.failure);
    // the nodes' physical time: `target`, the workload's end and the timeline are since traffic start
    const base = this.trafficStart;
    const end = target + base;
    if (this.barrier >= end) return;
    await new Promise<void>((resolve) => {
      const leg: Leg = {
        base,
        end,
        doneFrom: this.scenario.run.doneFromNs + base,
        untilDone,
        grant: this.barrier,
        lastProgressWall: performance.now(),
        lastProgressNs: this.barrier - base,
        signal,
        finish: () => {},
      };
      const tick = setInterval(() => this.watch(leg, onProgress), 500);
      leg.finish = (): void => {
        clearInterval(tick);
        signal?.removeEventListener('abort', leg.finish);
        this.onBarrier = null;
        resolve();
      };
      this.onBarrier = () => this.atBarrier(leg);
      signal?.addEventListener('abort', leg.finish, { once: true });
      this.sendGrant(leg, this.nextGrant(leg));
    });
    if (this.failure) throw new RuntimeError(this.failure);
  }

  /**
   * Conservative mode: a node reported reaching a grant, halting or pausing (or the run failed, or a
   * hold moved): when every node has handled everything before the grant, the fabric is at a barrier,
   * and the next grant goes out unless the leg is done, held, or waits for a node's restart.
   */
  private atBarrier(leg: Leg): void {
    if (this.failure) {
      leg.finish();
      return;
    }
    for (const n of this.nodes.values()) if (holdsBack(n, leg.grant)) return;
    // every node handled everything before `grant`
    this.barrier = leg.grant;
    leg.lastProgressWall = performance.now();
    for (const n of this.nodes.values()) n.eventsAtBarrier = n.stats?.fidelity.events ?? 0;
    const pending = this.pendingFaults;
    while (pending.length > 0 && pending[0].at + leg.base < leg.grant) this.noteFired(pending.shift()!);
    const p = this.progress();
    const done = leg.untilDone && leg.grant >= leg.doneFrom && p.flowsDone >= this.plan.flows.length;
    if (done || leg.grant >= leg.end || leg.signal?.aborted) {
      leg.finish();
      return;
    }
    // a live view's hold: no grant until it resumes or steps (resume() calls this again)
    if (this.holdAt !== null && this.barrier - leg.base >= this.holdAt) {
      this.heldAt = this.barrier - leg.base;
      return;
    }
    this.heldAt = null;
    const restart = this.nextRestart();
    if (restart !== undefined && restart.restarts[0] <= this.barrier) {
      // the fabric waits here until the node is back (rejoinConservative calls this again)
      this.restartConservative(restart);
      return;
    }
    this.sendGrant(leg, this.nextGrant(leg));
  }

  /** Conservative mode: the node whose restart comes first; no grant passes it before it is back. */
  private nextRestart(): NodeState | undefined {
    let first: NodeState | undefined;
    for (const n of this.nodes.values())
      if (n.restarts.length > 0 && (first === undefined || n.restarts[0] < first.restarts[0])) first = n;
    return first;
  }

  /** Conservative mode: how far the next grant goes. */
  private nextGrant(leg: Leg): number {
    const step = this.scenario.run.stepNs;
    let until = this.barrier + step;
    if (leg.untilDone && until < leg.doneFrom) {
      // the run cannot be done before the workload ends, so no barrier is needed at every step until
      // then; still one at every step before a timeline action (a pause stops its process only when
      // the grant has not passed it). The barriers stay on the same grid of steps, so the run ends at
      // the same one.
      const cap = Math.min(
        leg.doneFrom,
        (this.pendingFaults[0]?.at ?? Number.POSITIVE_INFINITY) + leg.base,
        (this.holdAt ?? Number.POSITIVE_INFINITY) + leg.base,
      );
      until = Math.max(until, this.barrier + Math.floor((cap - this.barrier) / step) * step);
    }
    return Math.min(until, leg.end, this.nextRestart()?.restarts[0] ?? Number.POSITIVE_INFINITY);
  }

  /** Conservative mode: every live node may run up to `until`; a paused one wakes as the grant passes its pause. */
  private sendGrant(leg: Leg, until: number): void {
    leg.grant = until;
    this.granted = until;
    for (const n of this.nodes.values()) {
      // a node stopped for its pause wakes when the fabric is about to pass the pause's end
      if (n.pausedUntil >= 0 && until > n.pausedUntil) {
        n.pausedUntil = -1;
        void this.runtime?.resume(n.config.name).catch(() => {});
      }
      if (n.conn && !n.conn.closed && !n.halted && !n.exited) n.conn.send({ type: 'grant', until });
    }
  }

  /** Conservative mode, twice a second: progress for the caller, and a stall ends the run saying why. */
  private watch(leg: Leg, onProgress: (p: Progress) => void): void {
    for (const n of this.live()) n.conn!.send({ type: 'snapshot' });
    const progress = this.progress();
    onProgress(progress);
    // a long grant: the slowest node moving counts as progress too
    if (progress.virtualNs > leg.lastProgressNs) {
      leg.lastProgressNs = progress.virtualNs;
      leg.lastProgressWall = performance.now();
    }
    // held by a live view: waiting is what it was asked for
    if (this.heldAt !== null) leg.lastProgressWall = performance.now();
    const stalledMs = performance.now() - leg.lastProgressWall;
    if (stalledMs > STALL_MS) {
      this.fail(
        `the fabric made no progress for ${Math.round(stalledMs / 1000)} s (wall) at ${((this.barrier - leg.base) / 1000).toFixed(1)} µs: ${this.holderText()}`,
      );
    }
  }

  /** Conservative mode: a timeline action goes to its nodes now, to take effect at its time. */
  private deliverAhead(ev: TimelineEvent): void {
    const at = this.trafficStart + ev.at;
    if (ev.node !== undefined) {
      const n = this.nodes.get(ev.node)!;
      switch (ev.action) {
        case 'kill':
          n.conn?.send({ type: 'halt', at });
          return;
        case 'pause':
          n.conn?.send({ type: 'pause', from: at, until: this.pauseEnd(ev.node, at) });
          return;
        case 'resume':
          return;
        case 'clock-step':
        case 'clock-freq':
          n.conn?.send({ type: 'fault', fault: clockFault(ev), at });
          return;
        case 'stop': {
          // halts like a kill, but its links promise silence only until the next start, if any
          const start = this.scenario.timeline.find(
            (e) => e.action === 'start' && e.node === ev.node && e.at > ev.at,
          );
          n.haltIsStop = true;
          n.conn?.send(
            start === undefined
              ? { type: 'halt', at }
              : { type: 'halt', at, until: this.trafficStart + start.at },
          );
          return;
        }
        case 'start':
          n.restarts.push(at);
          n.restarts.sort((a, b) => a - b);
          return;
        case 'disconnect':
        case 'connect':
          // the container's network, cut at the emulated wire: every link of the node, both ways, at
          // its exact time (the real network stays up: it carries the synchronization too)
          for (const [node, port] of this.linksOf(ev.node)) {
            const state = { down: ev.action === 'disconnect' };
            this.nodes.get(node)!.conn?.send({ type: 'fault', fault: { kind: 'wire', port, state }, at });
          }
          return;
      }
    }
    for (const [node, port, state] of wireFaults(ev, (node) => this.nodes.get(node)!.config.ports)) {
      this.nodes.get(node)!.conn?.send({ type: 'fault', fault: { kind: 'wire', port, state }, at });
    }
  }

  /** Conservative mode: a timeline action's time has passed; it goes into the fault list and the event log. */
  private noteFired(ev: TimelineEvent): void {
    this.recordFired(firedRecord(ev, ev.at));
  }

  private recordFired(fired: FiredFault): void {
    this.faults.push(fired);
    this.record({ kind: 'fault', node: fired.node ?? 'orchestrator', ...fired });
  }

  /** Every egress port on a link of `node`: its own, and each peer's toward it. */
  private linksOf(node: string): Array<[string, number]> {
    const out: Array<[string, number]> = [];
    for (const p of this.nodes.get(node)!.config.ports) {
      out.push([node, p.index]);
      out.push([p.peer, p.peerPort]);
    }
    return out;
  }

  /** The slowest node and the input it waits on, from the latest snapshots, as one line. */
  private holderText(): string {
    const wall = performance.now();
    return stallDiagnosis(
      [...this.live()]
        // a node stopped for its pause is silent by design: not the one the fabric waits on
        .filter((n) => !n.halted && n.stats !== null && n.pausedUntil < 0)
        .map((n) => ({
          name: n.config.name,
          stats: n.stats!,
          silentMs: wall - n.statsWall,
          busyEvents: n.stats!.fidelity.events - n.eventsAtBarrier,
          peers: n.config.ports.map((p) => p.peer),
        })),
    );
  }

  progress(): Progress {
    let flowsDone = 0;
    let flowsStarted = 0;
    let late99Ns = 0;
    let misses = 0;
    let frames = 0;
    for (const n of this.nodes.values()) {
      const s = n.stats;
      if (!s) continue;
      flowsDone += s.flowsDone;
      flowsStarted += s.flowsStarted;
      late99Ns = Math.max(late99Ns, s.fidelity.late99);
      misses += s.fidelity.misses;
      frames += s.fidelity.frames;
    }
    let holder: string | undefined;
    let virtualNs = Math.max(0, this.relNow());
    if (this.scenario.sync === 'conservative') {
      // the slowest node's safe time, from the latest snapshots
      let slowest = Number.POSITIVE_INFINITY;
      for (const n of this.live()) {
        if (n.halted || !n.stats || n.stats.now >= slowest) continue;
        slowest = n.stats.now;
        holder = n.config.name;
      }
      if (Number.isFinite(slowest))
        virtualNs = Math.max(this.barrier - this.trafficStart, slowest - this.trafficStart);
    }
    return {
      virtualNs,
      ...(holder !== undefined && { holder }),
      endNs: this.endNs,
      flowsDone,
      flowsTotal: this.plan.flows.length,
      flowsStarted,
      faultsFired: this.faults.length,
      faultsTotal: this.scenario.timeline.length,
      late99Ns,
      misses,
      frames,
    };
  }

  private *live(): Iterable<NodeState> {
    for (const n of this.nodes.values()) if (n.conn && !n.conn.closed && !n.killed && !n.exited) yield n;
  }

  /** Executes one timeline entry. Node faults go to the runtime; link faults to the wire filters. */
  private async fire(ev: TimelineEvent): Promise<void> {
    if (this.stopping || !this.runtime) return;
    // Node timers run on a millisecond loop clock and may fire a fraction early: wait out the rest
    const early = this.clock.realMs(ev.at - this.relNow());
    if (early > 0) {
      this.timers.push(setTimeout(() => void this.fire(ev), early + 0.5));
      return;
    }
    const fired = firedRecord(ev, this.relNow());
    const rt = this.runtime;
    if (ev.node !== undefined) {
      const n = this.nodes.get(ev.node)!;
      if (RUNTIME_ACTIONS.has(ev.action)) {
        const t0 = performance.now();
        try {
          await this.runtimeAction(rt, n, ev.action, ev.node);
        } catch (err) {
          const message = (err as Error).message.split('\n')[0];
          this.record({ t: this.relNow(), kind: 'fault-failed', node: ev.node, action: ev.action, message });
          return;
        }
        // a container runtime acts through the daemon: how long that took, real ms (docs/containers.md)
        if (rt.containers) fired.detail = { runtimeMs: Math.round(performance.now() - t0) };
      } else {
        n.conn?.send({ type: 'fault', fault: clockFault(ev) });
      }
    } else if (ev.link) {
      for (const [node, port, state] of wireFaults(ev, (node) => this.nodes.get(node)!.config.ports))
        this.nodes.get(node)!.conn?.send({ type: 'fault', fault: { kind: 'wire', port, state } });
    }
    this.recordFired(fired);
  }

  /** Node faults the runtime carries out: on the node's process, or on its container. */
  private async runtimeAction(rt: StartedRuntime, n: NodeState, action: string, node: string): Promise<void> {
    const c = rt.containers;
    if (CONTAINER_ACTIONS.has(action) && !c) throw new RuntimeError(`${action} needs a container runtime`);
    switch (action) {
      case 'kill':
        n.killed = true;
        // dilated mode: the node stops and reports what it carried, then its process dies (a paused
        // or silent one is killed without it after a short wait)
        if (n.conn && !n.conn.closed && !n.exited) {
          const reported = new Promise<void>((resolve) => {
            n.onKillReport = resolve;
            setTimeout(resolve, KILL_REPORT_MS).unref();
          });
          n.conn.send({ type: 'kill' });
          await reported;
          n.onKillReport = null;
        }
        return rt.kill(node);
      case 'pause':
        return rt.pause(node);
      case 'resume':
        return rt.resume(node);
      case 'stop':
        n.stopped = true;
        return c!.stopNode(node);
      case 'start':
        // its next control connection is the restarted process: accepted, configured, started (rejoin)
        n.restarting = true;
        return c!.startNode(node);
      case 'disconnect':
        n.disconnected = true;
        return c!.disconnect(node);
      case 'connect':
        n.disconnected = false;
        return c!.connect(node);
    }
  }

  stop(): Promise<FabricResult> {
    this.stopping ??= this.teardown();
    return this.stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  private async teardown(): Promise<FabricResult> {
    for (const t of this.timers) clearTimeout(t);
    this.end();
    const rt = this.runtime;
    // paused nodes cannot answer: wake them first; disconnected ones hear nothing: connect them
    if (rt)
      for (const n of this.nodes.values()) {
        if (!n.killed && !n.exited) await rt.resume(n.config.name).catch(() => {});
        if (n.disconnected) await rt.containers?.connect(n.config.name).catch(() => {});
      }
    const waits: Array<Promise<void>> = [];
    for (const n of this.live()) {
      const conn = n.conn!;
      waits.push(
        new Promise<void>((resolve) => {
          conn.on('message', (m) => m.type === 'report' && resolve());
          conn.once('close', () => resolve());
          conn.send({ type: 'stop' });
        }),
      );
    }
    await Promise.race([Promise.all(waits), new Promise((r) => setTimeout(r, 15_000).unref())]);
    const processes: StoppedRuntime = rt ? await rt.stop() : { started: 0, leftRunning: 0 };
    // what the runtime could not remove is said in the results, never lost with them
    await this.site.release().catch((err: Error) => {
      processes.kept ??= [err.message];
    });
    await this.server.close();
    const capture = this.capture?.close(this.now());
    const missing: FabricResult['missing'] = [];
    const cutShort = this.interruption?.during === 'start-up';
    for (const n of this.nodes.values())
      if (!n.report) missing.push({ node: n.config.name, reason: noReport(n, cutShort) });
    // the virtual time reached: the last barrier, or (inside a long grant) the time every node that
    // reported had got to when it did
    let reached = this.now();
    const times = [...this.nodes.values()].flatMap((n) =>
      n.report && n.report.end !== 'halt' ? [n.report.now - this.trafficStart] : [],
    );
    if (this.interruption && this.begun && times.length > 0) reached = Math.max(reached, Math.min(...times));
    if (this.interruption) {
      this.interruption.atNs = Math.round(reached);
      this.record({
        t: this.interruption.atNs,
        kind: 'interrupted',
        node: 'orchestrator',
        by: this.interruption.by,
        during: this.interruption.during,
      });
    }
    this.events.sort(byTimeNode);
    return {
      runId: this.runId,
      scenario: this.scenario,
      plan: this.plan,
      trafficStart: this.trafficStart,
      endNs: this.endNs,
      wallMs: Date.now() - this.wallStart,
      reports: [...this.nodes.values()].flatMap((n) => [...n.earlier, ...(n.report ? [n.report] : [])]),
      events: this.events,
      faults: this.faults,
      processes,
      missing,
      crashes: this.crashes,
      refusals: this.refusals,
      reachedNs: Math.round(reached),
      ...(this.interruption && { interrupted: this.interruption }),
      ...(capture && { capture }),
    };
  }
}
