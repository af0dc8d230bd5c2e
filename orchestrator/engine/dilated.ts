/**
 * Dilated time (docs/architecture.md: conservative and dilated time): every node runs on its own
 * clock, the wall clock slowed by the scenario's `tdf`; traffic starts a little ahead of now, the
 * timeline fires on timers, and the run watches progress twice a second until the workload is done
 * or its time is up. Fast, and as faithful as the machine keeps up (the run says how faithful).
 */
import type { StartedRuntime } from '../runtime/types.js';
import type { TimelineEvent } from '../scenario/resolve.js';
import { CONTAINER_ACTIONS } from '../scenario/schema.js';
import { RuntimeError } from './errors.js';
import { canRestart, isLive, kill, type NodeState, ready, restart, stop } from './node-life.js';
import type { Progress } from './progress.js';
import type { DriverHost, TimeDriver, TimeMode } from './time-driver.js';
import { clockFault, firedRecord, wireFaults } from './timeline-actions.js';

/** timeline actions on a node that its runtime carries out (the others travel over the control channel) */
const RUNTIME_ACTIONS: ReadonlySet<string> = new Set(['kill', 'pause', 'resume', ...CONTAINER_ACTIONS]);
/**
 * A node started again by the timeline starts its protocols this long (real ms) after it took its
 * config: time to bind and be told its peers, so it starts on time rather than catching up.
 */
const RESTART_LEAD_MS = 300;
/** How long a killed node has to report what it carried before its process dies, real ms. */
const KILL_REPORT_MS = 250;
/** Traffic starts this far ahead (real ms), so the start reaches every (possibly busy) node first. */
const START_LEAD_MS = 200;

export const dilatedMode: TimeMode = {
  cpuBound: false,
  startsNeedStops: false,
  driver: (host) => new Dilated(host),
};

class Dilated implements TimeDriver {
  private readonly timers: NodeJS.Timeout[] = [];
  /** called when a killed node's report at its halt comes, by node */
  private readonly killReports = new Map<string, () => void>();

  constructor(private readonly host: DriverHost) {}

  trafficStartAt(warmupNs: number): number {
    const clock = this.host.clock;
    return clock.now() + clock.virtualNs(START_LEAD_MS) + warmupNs;
  }

  relNow(): number {
    return this.host.clock.now() - this.host.trafficStart();
  }

  position(): { virtualNs: number } {
    return { virtualNs: Math.max(0, this.relNow()) };
  }

  /** Each action fires on a timer at its time. */
  schedule(events: TimelineEvent[]): void {
    const clock = this.host.clock;
    for (const ev of events) {
      const delay = clock.realMs(this.host.trafficStart() + ev.at - clock.now());
      this.timers.push(setTimeout(() => void this.fire(ev), Math.max(0, delay)));
    }
  }

  advance(
    target: number,
    untilDone: boolean,
    onProgress: (p: Progress) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const doneFrom = this.host.scenario.run.doneFromNs;
    const total = this.host.plan.flows.length;
    return new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        for (const n of this.host.live()) n.conn!.send({ type: 'snapshot' });
        const p = this.host.progress();
        onProgress(p);
        const done = untilDone && p.virtualNs >= doneFrom && p.flowsDone >= total;
        if (done || p.virtualNs >= target || signal?.aborted) finish();
      }, 500);
      const finish = (): void => {
        clearInterval(tick);
        signal?.removeEventListener('abort', finish);
        resolve();
      };
      signal?.addEventListener('abort', finish, { once: true });
    });
  }

  /** A little ahead of now: time to bind and hear its peers, so it starts on time. */
  restartAt(): number {
    return this.host.clock.now() + this.host.clock.virtualNs(RESTART_LEAD_MS);
  }

  /** It gets its peers and its start; its neighbours learn its address again if it moved. */
  rejoined(n: NodeState, moved: boolean): void {
    n.life = ready(n.life);
    if (moved) {
      for (const p of n.config.ports) {
        const peer = this.host.nodes.get(p.peer)!;
        if (peer.conn && !peer.conn.closed) peer.conn.send({ type: 'peers', peers: this.host.peersOf(peer) });
      }
    }
    n.conn!.send({ type: 'peers', peers: this.host.peersOf(n) });
    n.conn!.send({ type: 'start', at: n.restartAt });
    this.host.record({ t: this.relNow(), kind: 'node-restarted', node: n.config.name, udpPort: n.udpPort });
  }

  /** Now, on the wall clock; its peers find it silent as they would a killed node. */
  crashed(): number {
    return this.relNow();
  }

  message(): void {}

  haltReported(n: NodeState): void {
    this.killReports.get(n.config.name)?.();
  }

  hold(): void {
    throw new RuntimeError('hold: only a conservative run can be held (dilated time runs on the wall clock)');
  }

  held(): null {
    return null;
  }

  wake(): void {}

  close(): void {
    for (const t of this.timers) clearTimeout(t);
  }

  /** Executes one timeline entry. Node faults go to the runtime; link faults to the wire filters. */
  private async fire(ev: TimelineEvent): Promise<void> {
    const rt = this.host.runtime();
    if (this.host.stopping() || !rt) return;
    // Node timers run on a millisecond loop clock and may fire a fraction early: wait out the rest
    const early = this.host.clock.realMs(ev.at - this.relNow());
    if (early > 0) {
      this.timers.push(setTimeout(() => void this.fire(ev), early + 0.5));
      return;
    }
    const fired = firedRecord(ev, this.relNow());
    const nodes = this.host.nodes;
    if (ev.node !== undefined) {
      const n = nodes.get(ev.node)!;
      if (RUNTIME_ACTIONS.has(ev.action)) {
        const t0 = performance.now();
        try {
          await this.runtimeAction(rt, n, ev.action);
        } catch (err) {
          const message = (err as Error).message.split('\n')[0];
          this.host.record({
            t: this.relNow(),
            kind: 'fault-failed',
            node: ev.node,
            action: ev.action,
            message,
          });
          return;
        }
        // a container runtime acts through the daemon: how long that took, real ms (docs/containers.md)
        if (rt.containers) fired.detail = { runtimeMs: Math.round(performance.now() - t0) };
      } else {
        n.conn?.send({ type: 'fault', fault: clockFault(ev) });
      }
    } else if (ev.link) {
      for (const [node, port, state] of wireFaults(ev, (node) => nodes.get(node)!.config.ports))
        nodes.get(node)!.conn?.send({ type: 'fault', fault: { kind: 'wire', port, state } });
    }
    this.host.recordFired(fired);
  }

  /** Node faults the runtime carries out: on the node's process, or on its container. */
  private async runtimeAction(rt: StartedRuntime, n: NodeState, action: string): Promise<void> {
    const c = rt.containers;
    const node = n.config.name;
    if (CONTAINER_ACTIONS.has(action) && !c) throw new RuntimeError(`${action} needs a container runtime`);
    switch (action) {
      case 'kill': {
        // the node stops and reports what it carried, then its process dies (a paused or silent one
        // is killed without it after a short wait)
        const talks = n.conn !== null && !n.conn.closed && isLive(n.life);
        n.life = kill(n.life);
        if (talks) {
          const reported = new Promise<void>((resolve) => {
            this.killReports.set(node, resolve);
            setTimeout(resolve, KILL_REPORT_MS).unref();
          });
          n.conn!.send({ type: 'kill' });
          await reported;
          this.killReports.delete(node);
        }
        return rt.kill(node);
      }
      case 'pause':
        return rt.pause(node);
      case 'resume':
        return rt.resume(node);
      case 'stop':
        n.life = stop(n.life);
        return c!.stopNode(node);
      case 'start':
        // its next control connection is the restarted process: accepted, configured, started (rejoined)
        if (!canRestart(n.life)) throw new RuntimeError(`${node} is ${n.life.is}, not stopped`);
        n.life = restart(n.life);
        return c!.startNode(node);
      case 'disconnect':
        n.disconnected = true;
        return c!.disconnect(node);
      case 'connect':
        n.disconnected = false;
        return c!.connect(node);
    }
  }
}
