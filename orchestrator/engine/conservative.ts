/**
 * Conservative time (docs/architecture.md: conservative and dilated time): traffic starts at physical
 * time 0; every timeline action reaches its nodes ahead with its time; then the orchestrator grants
 * the nodes time in steps of `run.step`, and after each step, when every node has handled everything
 * before it (a barrier), checks whether the workload is done. The run therefore stops at a barrier,
 * an exact virtual time, whatever the machine's load: the results are the same bytes every time.
 */
import type { NodeMessage } from '../../core/messages.js';
import type { TimelineEvent } from '../scenario/resolve.js';
import { RuntimeError } from './errors.js';
import {
  canRestart,
  holdsBack,
  kill,
  type NodeState,
  pause,
  ready,
  relinked,
  restart,
  stop,
  takesGrants,
  wake,
} from './node-life.js';
import { type Progress, stallDiagnosis } from './progress.js';
import type { DriverHost, TimeDriver, TimeMode } from './time-driver.js';
import { clockFault, firedRecord, wireFaults } from './timeline-actions.js';

/** No barrier for this long (wall) means the fabric is stuck; the run fails naming the holder. */
const STALL_MS = 60_000;

/** One advance (a `run` or a `runFor`): where it goes, and how it is doing. */
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

/** What this driver keeps of each node. */
interface Sync {
  /** the latest grant the node reported reaching */
  reached: number;
  /** physical times the timeline starts it again, earliest first */
  restarts: number[];
  /** events it had handled when the fabric last moved (a barrier) */
  eventsAtBarrier: number;
}

export const conservativeMode: TimeMode = {
  cpuBound: true,
  startsNeedStops: true,
  driver: (host) => new Conservative(host),
};

class Conservative implements TimeDriver {
  /** the barrier every live node has reached, in the nodes' physical time */
  private barrier = 0;
  /** the last grant sent (physical ns) */
  private granted = 0;
  /** called when a node reports reaching a grant, halting or pausing, during an advance */
  private onBarrier: (() => void) | null = null;
  /** hold the fabric at the first barrier at or after this virtual time (a live view's pause or step) */
  private holdAt: number | null = null;
  /** the barrier it is held at */
  private heldAt: number | null = null;
  /** timeline actions delivered ahead whose time has not passed yet, by time */
  private pending: TimelineEvent[] = [];
  private readonly sync = new Map<string, Sync>();

  constructor(private readonly host: DriverHost) {
    for (const name of host.nodes.keys())
      this.sync.set(name, { reached: -1, restarts: [], eventsAtBarrier: 0 });
  }

  private of(n: NodeState): Sync {
    return this.sync.get(n.config.name)!;
  }

  trafficStartAt(warmupNs: number): number {
    return warmupNs;
  }

  relNow(): number {
    return this.barrier - this.host.trafficStart();
  }

  position(): { virtualNs: number; holder?: string } {
    // the slowest node's safe time, from the latest snapshots
    let slowest = Number.POSITIVE_INFINITY;
    let holder: string | undefined;
    for (const n of this.host.live()) {
      if (!takesGrants(n.life) || !n.stats || n.stats.now >= slowest) continue;
      slowest = n.stats.now;
      holder = n.config.name;
    }
    const base = this.host.trafficStart();
    const virtualNs = Number.isFinite(slowest)
      ? Math.max(this.barrier - base, slowest - base)
      : Math.max(0, this.barrier - base);
    return { virtualNs, ...(holder !== undefined && { holder }) };
  }

  /** Every timeline action goes to its nodes now, to take effect at its exact time. */
  schedule(events: TimelineEvent[]): void {
    for (const ev of events) this.deliverAhead(ev);
    this.pending.push(...events);
    this.pending.sort((x, y) => x.at - y.at);
  }

  async advance(
    target: number,
    untilDone: boolean,
    onProgress: (p: Progress) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const failed = (): void => {
      const failure = this.host.failure();
      if (failure) throw new RuntimeError(failure);
    };
    failed();
    const base = this.host.trafficStart();
    const end = target + base;
    if (this.barrier >= end) return;
    await new Promise<void>((resolve) => {
      const leg: Leg = {
        base,
        end,
        doneFrom: this.host.scenario.run.doneFromNs + base,
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
    failed();
  }

  /** Exactly at the timeline's `start`: the fabric waits there for it. */
  restartAt(n: NodeState): number {
    return this.of(n).restarts[0];
  }

  /**
   * Its peers start new link sessions with it first (their old ones died with the old process); it
   * speaks once all have (`relinked`).
   */
  rejoined(n: NodeState, moved: boolean): void {
    n.life = ready(n.life, n.config.ports.length);
    for (const p of n.config.ports) {
      const peer = this.host.nodes.get(p.peer)!;
      if (moved) peer.conn?.send({ type: 'peers', peers: this.host.peersOf(peer) });
      peer.conn?.send({ type: 'relink', port: p.peerPort });
    }
    if (n.life.is === 'running') this.relinkedAll(n);
  }

  /**
   * At least as far as the fabric and the node's last snapshot had come; its neighbours' last
   * promises of it move this on (`peer-gone`): each peer's link from it ends at the last promise it
   * sent, so the fabric never waits for a process that is gone.
   */
  crashed(n: NodeState): number {
    const t = Math.max(this.barrier, n.stats?.now ?? 0) - this.host.trafficStart();
    for (const p of n.config.ports)
      this.host.nodes.get(p.peer)?.conn?.send({ type: 'peer-gone', port: p.peerPort });
    this.onBarrier?.();
    return t;
  }

  message(n: NodeState, m: NodeMessage): void {
    switch (m.type) {
      case 'reached':
        this.of(n).reached = m.at;
        this.onBarrier?.();
        return;
      case 'halted':
        this.halted(n, m.at);
        return;
      case 'relinked': {
        // a peer started a new link session with a restarted node: when all have, it may speak
        const restarted = this.host.nodes.get(n.config.ports[m.port]?.peer ?? '');
        if (restarted?.life.is !== 'relinking') return;
        restarted.life = relinked(restarted.life);
        if (restarted.life.is === 'running') this.relinkedAll(restarted);
        return;
      }
      case 'paused': {
        // stopped for real only while its pause outlasts the time granted: a pause that ends inside
        // the grant must run on to it, and nothing would wake the process before the next barrier,
        // which waits on its promises
        const end = this.pauseEnd(n.config.name, m.at);
        const rt = this.host.runtime();
        if (rt && n.life.is === 'running' && end >= this.granted) {
          n.life = pause(n.life, end);
          void rt.pause(n.config.name).catch(() => {});
        }
        this.onBarrier?.();
        return;
      }
    }
  }

  haltReported(): void {}

  /**
   * Holds the fabric at the first barrier at or after `atNs` (barriers lie on the grid of `run.step`).
   * A held fabric's nodes wait for their next grant; holding never changes what they compute, only
   * when. Moving the hold past the barrier it is held at lets it go on (a step).
   */
  hold(atNs: number | null): void {
    this.holdAt = atNs;
    if (this.heldAt !== null && (atNs === null || atNs > this.heldAt)) {
      this.heldAt = null;
      this.onBarrier?.();
    }
  }

  held(): number | null {
    return this.heldAt;
  }

  wake(): void {
    this.onBarrier?.();
  }

  close(): void {}

  /** where a pause of `node` that starts at `from` (physical ns) ends: its next `resume`, or the end of the run */
  private pauseEnd(node: string, from: number): number {
    const base = this.host.trafficStart();
    const resume = this.host.scenario.timeline.find(
      (e) => e.action === 'resume' && e.node === node && e.at > from - base,
    );
    return (resume ? resume.at : this.host.endNs()) + base;
  }

  /**
   * The node stopped at its kill or stop time (`at`) and its links fell silent; now its process dies
   * for real (`stop`: its container is stopped, to be started again).
   */
  private halted(n: NodeState, at: number): void {
    const rt = this.host.runtime();
    const rel = at - this.host.trafficStart();
    const isStop = this.host.scenario.timeline.some(
      (e) => e.action === 'stop' && e.node === n.config.name && e.at === rel,
    );
    if (isStop && rt?.containers) {
      n.life = stop(
        n.life,
        rt.containers.stopNode(n.config.name).catch(() => {}),
      );
    } else if (rt && n.life.is !== 'killed') {
      n.life = kill(n.life);
      void rt.kill(n.config.name).catch(() => {});
    }
    this.onBarrier?.();
  }

  /**
   * Every peer of a restarted node has a new link session with it: it gets its peers, its start (the
   * timeline's time), the timeline's actions still to come for it, and the grant; the fabric moves on
   * from the barrier where it waited for it.
   */
  private relinkedAll(n: NodeState): void {
    const sync = this.of(n);
    sync.restarts.shift();
    sync.reached = this.barrier;
    n.conn!.send({ type: 'peers', peers: this.host.peersOf(n) });
    n.conn!.send({ type: 'start', at: n.restartAt });
    // the old process had them; the new one starts empty
    const from = n.restartAt - this.host.trafficStart();
    for (const ev of this.host.scenario.timeline)
      if (ev.at >= from && ev.action !== 'start') this.deliverAhead(ev, n.config.name);
    if (this.granted > this.barrier) n.conn!.send({ type: 'grant', until: this.granted });
    this.host.record({
      t: this.relNow(),
      kind: 'node-restarted',
      node: n.config.name,
      udpPort: n.udpPort,
    });
    this.onBarrier?.();
  }

  /** The fabric reached a node's restart time: its container is started again. */
  private restart(n: NodeState): void {
    if (n.life.is === 'restarting' || n.life.is === 'relinking') return; // under way
    if (!canRestart(n.life)) {
      // the fabric would wait here for a process that never comes
      this.host.fail(
        `${n.config.name}: the timeline starts it at ${this.relNow()} ns, but it is ${n.life.is}, not stopped`,
      );
      return;
    }
    const stopping = n.life.is === 'stopped' ? n.life.stopping : null;
    n.life = restart(n.life);
    const c = this.host.runtime()?.containers;
    if (!c) {
      this.host.fail(`${n.config.name}: a start needs a container runtime`);
      return;
    }
    void (async () => {
      await stopping;
      // its next control connection is the restarted process: accepted, configured, relinked, started
      await c.startNode(n.config.name);
    })().catch((err) =>
      this.host.fail(`${n.config.name}: start failed: ${(err as Error).message.split('\n')[0]}`),
    );
  }

  /**
   * A node reported reaching a grant, halting or pausing (or the run failed, or a hold moved): when
   * every node has handled everything before the grant, the fabric is at a barrier, and the next grant
   * goes out unless the leg is done, held, or waits for a node's restart.
   */
  private atBarrier(leg: Leg): void {
    if (this.host.failure()) {
      leg.finish();
      return;
    }
    for (const n of this.host.nodes.values()) if (holdsBack(n.life, this.of(n).reached, leg.grant)) return;
    // every node handled everything before `grant`
    this.barrier = leg.grant;
    leg.lastProgressWall = performance.now();
    for (const n of this.host.nodes.values()) this.of(n).eventsAtBarrier = n.stats?.fidelity.events ?? 0;
    while (this.pending.length > 0 && this.pending[0].at + leg.base < leg.grant) {
      const ev = this.pending.shift()!;
      this.host.recordFired(firedRecord(ev, ev.at));
    }
    const flowsDone = this.host.progress().flowsDone;
    const done = leg.untilDone && leg.grant >= leg.doneFrom && flowsDone >= this.host.plan.flows.length;
    if (done || leg.grant >= leg.end || leg.signal?.aborted) {
      leg.finish();
      return;
    }
    // a live view's hold: no grant until it resumes or steps (hold() calls this again)
    if (this.holdAt !== null && this.barrier - leg.base >= this.holdAt) {
      this.heldAt = this.barrier - leg.base;
      return;
    }
    this.heldAt = null;
    const next = this.nextRestart();
    if (next !== undefined && this.of(next).restarts[0] <= this.barrier) {
      // the fabric waits here until the node is back (relinkedAll calls this again)
      this.restart(next);
      return;
    }
    this.sendGrant(leg, this.nextGrant(leg));
  }

  /** The node whose restart comes first; no grant passes it before it is back. */
  private nextRestart(): NodeState | undefined {
    let first: NodeState | undefined;
    let at = Number.POSITIVE_INFINITY;
    for (const n of this.host.nodes.values()) {
      const next = this.of(n).restarts[0];
      if (next !== undefined && next < at) {
        first = n;
        at = next;
      }
    }
    return first;
  }

  /** How far the next grant goes. */
  private nextGrant(leg: Leg): number {
    const step = this.host.scenario.run.stepNs;
    let until = this.barrier + step;
    if (leg.untilDone && until < leg.doneFrom) {
      // the run cannot be done before the workload ends, so no barrier is needed at every step until
      // then; still one at every step before a timeline action (a pause stops its process only when
      // the grant has not passed it). The barriers stay on the same grid of steps, so the run ends at
      // the same one.
      const cap = Math.min(
        leg.doneFrom,
        (this.pending[0]?.at ?? Number.POSITIVE_INFINITY) + leg.base,
        (this.holdAt ?? Number.POSITIVE_INFINITY) + leg.base,
      );
      until = Math.max(until, this.barrier + Math.floor((cap - this.barrier) / step) * step);
    }
    const restart = this.nextRestart();
    return Math.min(until, leg.end, restart ? this.of(restart).restarts[0] : Number.POSITIVE_INFINITY);
  }

  /** Every live node may run up to `until`; a paused one wakes as the grant passes its pause. */
  private sendGrant(leg: Leg, until: number): void {
    leg.grant = until;
    this.granted = until;
    for (const n of this.host.nodes.values()) {
      // a node stopped for its pause wakes when the fabric is about to pass the pause's end
      if (n.life.is === 'paused' && until > n.life.until) {
        n.life = wake(n.life);
        void this.host
          .runtime()
          ?.resume(n.config.name)
          .catch(() => {});
      }
      if (n.conn && !n.conn.closed && takesGrants(n.life)) n.conn.send({ type: 'grant', until });
    }
  }

  /** Twice a second: progress for the caller, and a stall ends the run saying why. */
  private watch(leg: Leg, onProgress: (p: Progress) => void): void {
    for (const n of this.host.live()) n.conn!.send({ type: 'snapshot' });
    const progress = this.host.progress();
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
      this.host.fail(
        `the fabric made no progress for ${Math.round(stalledMs / 1000)} s (wall) at ${((this.barrier - leg.base) / 1000).toFixed(1)} µs: ${this.holderText()}`,
      );
    }
  }

  /** The slowest node and the input it waits on, from the latest snapshots, as one line. */
  private holderText(): string {
    const wall = performance.now();
    return stallDiagnosis(
      [...this.host.live()]
        // a node stopped for its pause is silent by design: not the one the fabric waits on
        .filter((n) => n.life.is === 'running' && n.stats !== null)
        .map((n) => ({
          name: n.config.name,
          stats: n.stats!,
          silentMs: wall - n.statsWall,
          busyEvents: n.stats!.fidelity.events - this.of(n).eventsAtBarrier,
          peers: n.config.ports.map((p) => p.peer),
        })),
    );
  }

  /**
   * A timeline action goes to its nodes now, to take effect at its time; `only`: to that node alone
   * (a restarted process, which did not have it).
   */
  private deliverAhead(ev: TimelineEvent, only?: string): void {
    const at = this.host.trafficStart() + ev.at;
    const send = (node: string, m: Parameters<NonNullable<NodeState['conn']>['send']>[0]): void => {
      if (only === undefined || only === node) this.host.nodes.get(node)!.conn?.send(m);
    };
    if (ev.node !== undefined) {
      const node = ev.node;
      switch (ev.action) {
        case 'kill':
          send(node, { type: 'halt', at });
          return;
        case 'pause':
          send(node, { type: 'pause', from: at, until: this.pauseEnd(node, at) });
          return;
        case 'resume':
          return;
        case 'clock-step':
        case 'clock-freq':
          send(node, { type: 'fault', fault: clockFault(ev), at });
          return;
        case 'stop': {
          // halts like a kill, but its links promise silence only until the next start, if any
          const start = this.host.scenario.timeline.find(
            (e) => e.action === 'start' && e.node === node && e.at > ev.at,
          );
          send(
            node,
            start === undefined
              ? { type: 'halt', at }
              : { type: 'halt', at, until: this.host.trafficStart() + start.at },
          );
          return;
        }
        case 'start': {
          const restarts = this.of(this.host.nodes.get(node)!).restarts;
          restarts.push(at);
          restarts.sort((a, b) => a - b);
          return;
        }
        case 'disconnect':
        case 'connect':
          // the container's network, cut at the emulated wire: every link of the node, both ways, at
          // its exact time (the real network stays up: it carries the synchronization too)
          for (const [peer, port] of this.linksOf(node)) {
            const state = { down: ev.action === 'disconnect' };
            send(peer, { type: 'fault', fault: { kind: 'wire', port, state }, at });
          }
          return;
      }
    }
    for (const [node, port, state] of wireFaults(ev, (node) => this.host.nodes.get(node)!.config.ports))
      send(node, { type: 'fault', fault: { kind: 'wire', port, state }, at });
  }

  /** Every egress port on a link of `node`: its own, and each peer's toward it. */
  private linksOf(node: string): Array<[string, number]> {
    const out: Array<[string, number]> = [];
    for (const p of this.host.nodes.get(node)!.config.ports) {
      out.push([node, p.index]);
      out.push([p.peer, p.peerPort]);
    }
    return out;
  }
}
