/**
 * A started fabric run (orchestrator/engine/engine.ts starts it): `run()` starts traffic, fires the
 * timeline and watches progress until the workload is done or the drain deadline passes; `stop()`
 * (idempotent, also `await using`) collects every node's report and tears the runtime down, leaving
 * no process behind.
 */
import type { ControlConnection, ControlServer, Refusal } from '../../core/control.js';
import type { PeerAddress } from '../../core/endpoint.js';
import type { NodeConfig, NodeEvent, NodeMessage, NodeReport } from '../../core/messages.js';
import type { PhysClock } from '../../core/time.js';
import type { ExitInfo, RuntimeSite, StartedRuntime, StoppedRuntime } from '../runtime/types.js';
import type { Scenario, TimelineEvent } from '../scenario/resolve.js';
import { CONTAINER_ACTIONS } from '../scenario/schema.js';
import type { CaptureFiles } from './capture.js';
import { RuntimeError } from './errors.js';
import type { FabricResult } from './fabric-result.js';
import type { FiredFault } from './fired.js';
import { exit, isLive, type NodeState, newNodeState, noReport, ready } from './node-life.js';
import type { Plan } from './plan.js';
import type { Progress } from './progress.js';
import type { TimeDriver } from './time-driver.js';
import { orphanStart, TIME_MODES } from './time-modes.js';

/** Event order in results: time, then node name; a node's own events keep their order (a stable sort). */
function byTimeNode(x: NodeEvent, y: NodeEvent): number {
  return x.t - y.t || (x.node < y.node ? -1 : x.node > y.node ? 1 : 0);
}

/** The start-up under way: nodes not yet ready, and how `attach`'s wait ends. */
export interface StartUp {
  pending: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class StartedEngine implements AsyncDisposable {
  private runtime: StartedRuntime | null = null;
  private readonly nodes = new Map<string, NodeState>();
  readonly events: NodeEvent[] = [];
  readonly faults: FiredFault[] = [];
  private trafficStart = 0;
  private readonly wallStart = Date.now();
  private stopping: Promise<FabricResult> | null = null;
  /** how time moves: conservative or dilated, chosen once (time-driver.ts) */
  private readonly time: TimeDriver;
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
    for (const c of plan.nodes) this.nodes.set(c.name, newNodeState(c));
    this.time = TIME_MODES[scenario.sync].driver({
      scenario,
      plan,
      clock,
      nodes: this.nodes,
      endNs: () => this.endNs,
      runtime: () => this.runtime,
      trafficStart: () => this.trafficStart,
      failure: () => this.failure,
      fail: (message) => this.fail(message),
      stopping: () => this.stopping !== null,
      live: () => this.live(),
      peersOf: (n) => this.peersOf(n),
      progress: () => this.progress(),
      record: (e) => this.record(e),
      recordFired: (fired) => this.recordFired(fired),
    });
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
        const missing = [...this.nodes.values()]
          .filter((n) => n.life.is === 'starting')
          .map((n) => n.config.name);
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
    const was = n.life.is;
    // a node that reported on a SIGTERM of its own was ended from outside the run; any other
    // unplanned exit is a crash (scheme code that threw, an OOM kill, a SIGKILL)
    const why =
      n.report?.end === 'SIGTERM'
        ? 'ended by a SIGTERM from outside the run'
        : info.signal
          ? `signal ${info.signal}`
          : `exit code ${info.code}`;
    n.life = exit(n.life, this.stopping !== null, why);
    if (was === 'starting' && this.stopping === null)
      startUp.reject(
        new RuntimeError(
          `node ${info.name} exited during start-up (${why}); see ${info.name}.stderr in the logs folder`,
        ),
      );
    else if (n.life.is === 'crashed' && was !== 'crashed') this.crash(n, why);
  }

  /** A node's control connection: refused unless it is the run's node's first (or a restarted one's). */
  private accept(conn: ControlConnection, startUp: StartUp): void {
    const n = this.nodes.get(conn.name);
    // one connection per node; a second one only from a node the timeline started again
    if (!n || (n.conn && !(n.life.is === 'restarting' && n.conn.closed))) {
      const reason = n ? `'${conn.name}' is already connected` : `'${conn.name}' is not a node of this run`;
      this.refused({ peer: conn.peer, name: conn.name, reason });
      conn.refuse(reason);
      return;
    }
    const rejoining = n.conn !== null;
    // a restarted node starts when its time driver says (restartConfig re-bases its flows on it)
    if (rejoining) n.restartAt = this.time.restartAt(n);
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
          n.life = ready(n.life);
          if (--startUp.pending === 0) startUp.resolve();
        }
        break;
      case 'event':
        this.record({ ...m.event, t: m.event.t - this.trafficStart });
        break;
      case 'reached':
        n.stats = m.stats;
        n.statsWall = performance.now();
        this.time.message(n, m);
        break;
      case 'halted':
      case 'relinked':
      case 'paused':
        this.time.message(n, m);
        break;
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
        if (n.life.is === 'starting')
          startUp.reject(
            new RuntimeError(`node ${n.config.name} failed to start: ${m.message.split('\n')[0]}`),
          );
        break;
    }
  }

  /** A node's report: at the run's end, or what a killed or stopped node carried up to its halt. */
  private reported(n: NodeState, report: NodeReport): void {
    if (report.end === 'halt') {
      // what a killed or stopped node carried up to its halt (a restarted one reports anew)
      if (n.report?.end === 'halt') n.earlier.push(n.report);
      n.report = report;
      this.time.haltReported(n);
    } else if (n.life.is === 'stopped') {
      // a node whose container the timeline stopped without a halt before (a halted one reported
      // then) reports on the stop's SIGTERM: what it carried up to its stop
      n.report = { ...report, end: 'halt' };
    } else if (n.life.is !== 'killed') {
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
    const config = n.config;
    if (!config.flows) return config;
    const shift = n.restartAt - this.trafficStart;
    const flows = config.flows.filter((f) => f.start >= shift).map((f) => ({ ...f, start: f.start - shift }));
    return { ...config, flows };
  }

  /**
   * A restarted node connected, took its config and bound its socket: the time driver gives it its
   * peers and its start (`restartAt`, see restartConfig). Neighbours learn its address again only if
   * it changed (runtimes without a fixed node port; a swarm task started again gets a new address).
   */
  private rejoin(n: NodeState, udpHost: string, udpPort: number): void {
    const moved = udpPort !== n.udpPort || udpHost !== n.udpHost;
    n.udpHost = udpHost;
    n.udpPort = udpPort;
    n.stats = null;
    n.queues = null;
    this.time.rejoined(n, moved);
  }

  /**
   * A node's process ended unplanned. The run goes on without it, as after a kill where its peers'
   * view of it ended (the time driver says when that was). Such a run is not reproducible (the crash
   * came at a wall-clock moment), and its summary and events say so.
   */
  private crash(n: NodeState, why: string): void {
    const t = this.time.crashed(n);
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
    return this.time.relNow();
  }

  /** the run cannot give right results any more: it ends, and says why */
  private fail(message: string): void {
    this.failure ??= message;
    this.time.wake();
  }

  private record(e: NodeEvent): void {
    this.events.push(e);
  }

  private recordFired(fired: FiredFault): void {
    this.faults.push(fired);
    this.record({ kind: 'fault', node: fired.node ?? 'orchestrator', ...fired });
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

  /** Starts traffic (once) and schedules the timeline. */
  private begin(): void {
    if (this.begun) return;
    this.begun = true;
    // PTP's warm-up (ptp.warmup): the clocks synchronize that long before traffic starts
    this.trafficStart = this.time.trafficStartAt(this.scenario.ptp?.warmupNs ?? 0);
    for (const n of this.live()) n.conn!.send({ type: 'start', at: this.trafficStart });
    this.record({ t: 0, kind: 'traffic-start', node: 'orchestrator', flows: this.plan.flows.length });
    this.time.schedule(this.scenario.timeline);
  }

  /**
   * Starts traffic and runs until every flow is done (after the workload window) or the drain
   * deadline; fires the timeline on the way. `onProgress` is called about twice a second.
   */
  async run(onProgress: (p: Progress) => void = () => {}, signal?: AbortSignal): Promise<void> {
    this.begin();
    await this.time.advance(this.endNs, true, onProgress, signal);
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
    await this.time.advance(this.now() + ns, false, onProgress, signal);
  }

  /**
   * Conservative mode: hold the fabric at the first barrier at or after `atNs` (virtual ns since
   * traffic start; barriers lie on the grid of `run.step`), or nowhere (null). A held fabric's nodes
   * wait for their next grant; holding never changes what they compute, only when. Moving the hold
   * past the barrier the fabric is held at lets it go on (a step); `resume` is `hold(null)`.
   */
  hold(atNs: number | null): void {
    if (atNs !== null && !(atNs >= 0)) throw new RuntimeError(`hold: expected a time >= 0 ns, got ${atNs}`);
    this.time.hold(atNs);
  }

  /** The switches' egress queues at their last snapshot (every ~500 ms of wall time), largest first. */
  queuesNow(max = 10): Array<{ port: string; bytes: number }> {
    const out: Array<{ port: string; bytes: number }> = [];
    for (const n of this.nodes.values()) {
      const q = n.queues;
      if (!q || !isLive(n.life)) continue;
      q.forEach((bytes, i) => {
        if (bytes > 0) out.push({ port: `${n.config.name}:${i}→${n.config.ports[i]?.peer ?? '?'}`, bytes });
      });
    }
    return out.sort((a, b) => b.bytes - a.bytes || (a.port < b.port ? -1 : 1)).slice(0, max);
  }

  /** Where a live view's hold keeps the fabric: the barrier it waits at, or null while it runs. */
  held(): number | null {
    return this.time.held();
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
    const orphan = orphanStart(this.scenario, [...this.scenario.timeline, ...events]);
    if (orphan && events.includes(orphan))
      throw new RuntimeError(
        `inject: start of ${orphan.node} at ${orphan.at} ns: the node was not stopped before`,
      );
    this.scenario.timeline.push(...events);
    this.time.schedule(events);
  }

  private end(): void {
    if (this.ended || !this.begun) return;
    this.ended = true;
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
      ...this.time.position(),
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

  /** nodes with a process to talk to */
  private *live(): Iterable<NodeState> {
    for (const n of this.nodes.values()) if (n.conn && !n.conn.closed && isLive(n.life)) yield n;
  }

  stop(): Promise<FabricResult> {
    this.stopping ??= this.teardown();
    return this.stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  private async teardown(): Promise<FabricResult> {
    this.time.close();
    this.end();
    const rt = this.runtime;
    // paused nodes cannot answer: wake them first; disconnected ones hear nothing: connect them
    if (rt)
      for (const n of this.nodes.values()) {
        if (isLive(n.life)) await rt.resume(n.config.name).catch(() => {});
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
