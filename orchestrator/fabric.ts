/**
 * A fabric run, with its lifecycle in the types (STYLE §8): `Fabric.start()` launches every node,
 * waits for them to connect and bind, hands out peer addresses and returns a `StartedFabric`;
 * `StartedFabric.run()` starts traffic, fires the timeline and watches progress until the workload is
 * done or the drain deadline passes; `stop()` (idempotent, also `await using`) collects every node's
 * report and tears the runtime down, leaving no process behind.
 */
import { mkdirSync } from 'node:fs';
import { type ControlConnection, ControlServer } from '../core/control.js';
import type { PeerAddress } from '../core/endpoint.js';
import type { NodeConfig, NodeEvent, NodeReport, ProgressStats } from '../core/messages.js';
import { monotonicEpoch, PhysClock } from '../core/time.js';
import { RuntimeError } from './errors.js';
import { F10ControllerHost } from './f10-host.js';
import { type Plan, planRun } from './plan.js';
import type { Runtime, RuntimeSite, StartedRuntime, StoppedRuntime } from './runtime/types.js';
import type { Scenario, TimelineEvent } from './scenario/resolve.js';
import { CONTAINER_ACTIONS } from './scenario/schema.js';

/** timeline actions on a node that its runtime carries out (the others travel over the control channel) */
const RUNTIME_ACTIONS: ReadonlySet<string> = new Set(['kill', 'pause', 'resume', ...CONTAINER_ACTIONS]);
/**
 * A node started again by the timeline starts its protocols this long (real ms) after it took its
 * config: time to bind and be told its peers, so it starts on time rather than catching up.
 */
const RESTART_LEAD_MS = 300;

export interface FiredFault {
  /** physical time it fired, virtual ns since traffic start */
  t: number;
  /** when the timeline asked for it, virtual ns since traffic start */
  at: number;
  action: string;
  node?: string;
  link?: [string, string];
  detail?: Record<string, unknown>;
}

/** Timeline actions that repair: neighbours notice them as a port coming back up, not going down. */
export const REPAIRS: ReadonlySet<string> = new Set(['resume', 'start', 'connect', 'link-up']);

/**
 * Whether a node's port event is about fault `f`: a port toward the node it hit, or an end of the
 * link it hit looking at the other end.
 */
export function concerns(f: FiredFault, e: NodeEvent): boolean {
  if (f.node) return e.peer === f.node;
  const ends: string[] = f.link ?? [];
  return ends.includes(e.node) && ends.includes(e.peer as string);
}

export interface Progress {
  virtualNs: number;
  endNs: number;
  flowsDone: number;
  flowsTotal: number;
  flowsStarted: number;
  faultsFired: number;
  faultsTotal: number;
  late99Ns: number;
  misses: number;
  frames: number;
}

export interface FabricOptions {
  runtime: Runtime;
  /** results folder; logs go to <out>/logs */
  out: string;
  /** how long nodes get to connect and bind, real ms */
  startTimeoutMs?: number;
  /** labels every process of the run; default a fresh `dcemu-<pid>-<random>` */
  runId?: string;
}

export class Fabric {
  constructor(
    readonly scenario: Scenario,
    private readonly opts: FabricOptions,
  ) {}

  async start(): Promise<StartedFabric> {
    const logDir = `${this.opts.out}/logs`;
    mkdirSync(logDir, { recursive: true });
    const epoch = monotonicEpoch();
    const runId = this.opts.runId ?? `dcemu-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const runtime = this.opts.runtime;
    // container faults need containers: refuse before anything starts, naming the timeline line
    const needs = this.scenario.timeline.find((e) => CONTAINER_ACTIONS.has(e.action));
    if (needs && !runtime.containerFaults)
      throw new RuntimeError(
        `${this.scenario.file}:${needs.line}: action ${needs.action} needs --runtime docker (the ${runtime.kind} runtime has no containers)`,
      );
    const site = await runtime.prepare(
      this.scenario.topology.nodes.map((n) => n.name),
      runId,
    );
    const plan = planRun(this.scenario, { epoch, bindHost: site.nodeHost, logDir });
    if (site.nodePort !== undefined) for (const c of plan.nodes) c.bindPort = site.nodePort;
    const server = new ControlServer();
    let controlPort: number;
    try {
      controlPort = await server.listen(site.controlHost, site.controlPort);
    } catch (err) {
      await site.release();
      throw err;
    }
    const started = new StartedFabric(
      this.scenario,
      plan,
      new PhysClock(epoch, this.scenario.tdf),
      server,
      runId,
      site,
    );
    try {
      const runtime = await this.opts.runtime.start(
        plan.nodes.map((n) => ({
          name: n.name,
          runId,
          role: n.kind,
          logDir,
          env: { DCEMU_CONTROL: `${site.controlHost}:${controlPort}`, DCEMU_NODE: n.name },
        })),
      );
      await started.attach(runtime, this.opts.startTimeoutMs ?? 30_000);
    } catch (err) {
      await started.stop();
      throw err;
    }
    return started;
  }
}

interface NodeState {
  config: NodeConfig;
  conn: ControlConnection | null;
  udpPort: number;
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
  report: NodeReport | null;
  stats: ProgressStats | null;
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
}

export class StartedFabric implements AsyncDisposable {
  private runtime: StartedRuntime | null = null;
  private readonly nodes = new Map<string, NodeState>();
  readonly events: NodeEvent[] = [];
  readonly faults: FiredFault[] = [];
  private trafficStart = 0;
  private readonly wallStart = Date.now();
  private stopping: Promise<FabricResult> | null = null;
  private timers: NodeJS.Timeout[] = [];
  /** the F10 (or PortLand) controller, when the scheme has one */
  readonly controller: F10ControllerHost | null = null;

  constructor(
    readonly scenario: Scenario,
    readonly plan: Plan,
    readonly clock: PhysClock,
    private readonly server: ControlServer,
    readonly runId: string,
    private readonly site: RuntimeSite,
  ) {
    // nodes may connect while the runtime is still starting others (containers start over seconds):
    // keep them until `attach` takes over
    server.on('connection', this.early);
    for (const c of plan.nodes) {
      this.nodes.set(c.name, {
        config: c,
        conn: null,
        udpPort: 0,
        killed: false,
        exited: false,
        stopped: false,
        restarting: false,
        restartAt: 0,
        disconnected: false,
        report: null,
        stats: null,
      });
    }
    if (scenario.scheme.kind !== 'ecmp') {
      this.controller = new F10ControllerHost(
        scenario.scheme,
        scenario.topology,
        clock,
        (node, command) => {
          const n = this.nodes.get(node);
          if (n && !n.killed && !n.exited) n.conn?.send({ type: 'downcall', body: command });
        },
        (e) => this.record(e),
      );
    }
  }

  private readonly earlyConnections: ControlConnection[] = [];
  private readonly early = (conn: ControlConnection): void => {
    this.earlyConnections.push(conn);
  };

  /** Waits until every node has connected, taken its config and bound its socket; sends peers. */
  async attach(runtime: StartedRuntime, timeoutMs: number): Promise<void> {
    this.runtime = runtime;
    const ready = new Promise<void>((resolve, reject) => {
      let pending = this.nodes.size;
      runtime.onExit((info) => {
        const n = this.nodes.get(info.name);
        if (!n) return;
        n.exited = true;
        if (!n.killed && !n.stopped && !this.stopping) {
          const why = info.signal ? `signal ${info.signal}` : `exit code ${info.code}`;
          this.record({ t: this.relNow(), kind: 'node-crashed', node: info.name, reason: why });
          if (n.udpPort === 0)
            reject(
              new RuntimeError(
                `node ${info.name} exited during start-up (${why}); see ${info.name}.stderr in the logs folder`,
              ),
            );
        }
      });
      const accept = (conn: ControlConnection): void => {
        const n = this.nodes.get(conn.name);
        // one connection per node; a second one only from a node the timeline started again
        if (!n || (n.conn && !(n.restarting && n.conn.closed))) {
          conn.destroy();
          return;
        }
        const rejoining = n.conn !== null;
        n.conn = conn;
        runtime.nodeConnected?.(conn.name, conn);
        conn.on('message', (m) => {
          switch (m.type) {
            case 'ready':
              if (rejoining) this.rejoin(n, m.udpPort);
              else {
                n.udpPort = m.udpPort;
                if (--pending === 0) resolve();
              }
              break;
            case 'event': {
              const e = { ...m.event, t: m.event.t - this.trafficStart };
              this.record(e);
              this.controller?.onEvent(e);
              break;
            }
            case 'upcall':
              this.controller?.onUpcall(n.config.name, m.t - this.trafficStart, m.body);
              break;
            case 'stats':
              n.stats = m.stats;
              break;
            case 'report':
              n.report = m.report;
              break;
            case 'error':
              this.record({ t: this.relNow(), kind: 'node-error', node: n.config.name, message: m.message });
              // a node that cannot configure itself will never be ready: say why now, not at the timeout
              if (n.udpPort === 0) {
                reject(
                  new RuntimeError(`node ${n.config.name} failed to start: ${m.message.split('\n')[0]}`),
                );
              }
              break;
          }
        });
        conn.send({ type: 'config', config: rejoining ? this.restartConfig(n) : n.config });
      };
      this.server.off('connection', this.early);
      this.server.on('connection', accept);
      for (const conn of this.earlyConnections.splice(0)) accept(conn);
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
    try {
      await Promise.race([ready, timeout]);
    } finally {
      clearTimeout(timer);
    }
    for (const n of this.nodes.values()) n.conn!.send({ type: 'peers', peers: this.peersOf(n) });
  }

  private peersOf(n: NodeState): Array<PeerAddress | null> {
    return n.config.ports.map((p) => {
      const peer = this.nodes.get(p.peer)!;
      return { host: this.site.nodeHost(p.peer), port: peer.udpPort, peerPort: p.peerPort };
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
    n.restartAt = this.clock.now() + this.clock.virtualNs(RESTART_LEAD_MS);
    const config = n.config;
    if (!config.flows) return config;
    const shift = n.restartAt - this.trafficStart;
    const flows = config.flows.filter((f) => f.start >= shift).map((f) => ({ ...f, start: f.start - shift }));
    return { ...config, flows };
  }

  /**
   * A restarted node connected, took its config and bound its socket: it gets its peers, then its
   * start (`restartAt`, see restartConfig). Neighbours learn its port again only if it changed
   * (runtimes without a fixed node port).
   */
  private rejoin(n: NodeState, udpPort: number): void {
    const moved = udpPort !== n.udpPort;
    n.udpPort = udpPort;
    n.restarting = false;
    n.stopped = false;
    n.killed = false;
    n.exited = false;
    n.stats = null;
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

  private relNow(): number {
    return this.clock.now() - this.trafficStart;
  }

  private record(e: NodeEvent): void {
    this.events.push(e);
  }

  get endNs(): number {
    return this.scenario.workload.durationNs + this.scenario.run.drainNs;
  }

  /**
   * Starts traffic and runs until every flow is done (after the workload window) or the drain
   * deadline; fires the timeline on the way. `onProgress` is called about twice a second.
   */
  async run(onProgress: (p: Progress) => void = () => {}, signal?: AbortSignal): Promise<void> {
    const sc = this.scenario;
    // a start far enough ahead that the message reaches every (possibly busy) node first: 200 ms real
    this.trafficStart = this.clock.now() + this.clock.virtualNs(200);
    for (const n of this.live()) n.conn!.send({ type: 'start', at: this.trafficStart });
    this.record({ t: 0, kind: 'traffic-start', node: 'orchestrator', flows: this.plan.flows.length });
    this.controller?.start(this.trafficStart);
    for (const ev of sc.timeline) {
      const delay = this.clock.realMs(this.trafficStart + ev.at - this.clock.now());
      this.timers.push(setTimeout(() => void this.fire(ev), Math.max(0, delay)));
    }
    const total = this.plan.flows.length;
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        for (const n of this.live()) n.conn!.send({ type: 'snapshot' });
        const p = this.progress();
        onProgress(p);
        const done = p.virtualNs >= sc.workload.durationNs && p.flowsDone >= total;
        if (done || p.virtualNs >= this.endNs || signal?.aborted) {
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
    this.record({ t: this.relNow(), kind: 'traffic-end', node: 'orchestrator' });
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
    return {
      virtualNs: Math.max(0, this.relNow()),
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
    const fired: FiredFault = { t: this.relNow(), at: ev.at, action: ev.action };
    const rt = this.runtime;
    if (ev.node !== undefined) {
      fired.node = ev.node;
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
        const fault =
          ev.action === 'clock-step'
            ? { kind: 'clock' as const, stepNs: ev.stepNs }
            : { kind: 'clock' as const, freqPpm: ev.freqPpm };
        fired.detail = { ...fault };
        n.conn?.send({ type: 'fault', fault });
      }
    } else if (ev.link) {
      fired.link = ev.link;
      const [a, b] = ev.link;
      const ends: Array<[string, string]> =
        ev.direction === 'forward'
          ? [[a, b]]
          : ev.direction === 'reverse'
            ? [[b, a]]
            : [
                [a, b],
                [b, a],
              ];
      const state =
        ev.action === 'link-down'
          ? { down: true }
          : ev.action === 'link-up'
            ? { down: false, loss: 0, corrupt: 0, delayNs: 0, ptpLoss: 0 }
            : ev.action === 'ptp-loss'
              ? { ptpLoss: ev.loss }
              : { loss: ev.loss, corrupt: ev.corrupt, delayNs: ev.delayNs };
      fired.detail = { direction: ev.direction, ...state };
      for (const [from, to] of ends) {
        const n = this.nodes.get(from)!;
        for (const p of n.config.ports) {
          if (p.peer === to) n.conn?.send({ type: 'fault', fault: { kind: 'wire', port: p.index, state } });
        }
      }
    }
    this.faults.push(fired);
    this.record({ kind: 'fault', node: fired.node ?? 'orchestrator', ...fired });
  }

  /** Node faults the runtime carries out: on the node's process, or on its container. */
  private async runtimeAction(rt: StartedRuntime, n: NodeState, action: string, node: string): Promise<void> {
    const c = rt.containers;
    if (CONTAINER_ACTIONS.has(action) && !c) throw new RuntimeError(`${action} needs a container runtime`);
    switch (action) {
      case 'kill':
        n.killed = true;
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
    this.controller?.stop();
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
    const processes = rt ? await rt.stop() : { started: 0, leftRunning: 0 };
    await this.site.release();
    await this.server.close();
    const missing: FabricResult['missing'] = [];
    for (const n of this.nodes.values()) {
      if (n.report) continue;
      missing.push({
        node: n.config.name,
        reason: n.killed
          ? 'killed by the timeline'
          : n.stopped
            ? 'stopped by the timeline'
            : n.exited
              ? 'exited early'
              : 'no report',
      });
    }
    this.events.sort((x, y) => x.t - y.t);
    return {
      runId: this.runId,
      scenario: this.scenario,
      plan: this.plan,
      trafficStart: this.trafficStart,
      endNs: this.endNs,
      wallMs: Date.now() - this.wallStart,
      reports: [...this.nodes.values()].flatMap((n) => (n.report ? [n.report] : [])),
      events: this.events,
      faults: this.faults,
      processes,
      missing,
    };
  }
}
