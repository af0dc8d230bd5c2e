/**
 * Hosts the F10 controller (arbiter/f10) for a run: it hears the switches' failure detections and
 * traffic reports through the control channel and answers with route updates, on the emulated clock.
 * `f10`: every epoch it places the predictable ToR pairs, hands out weighted-ECMP residuals, and
 * reinstalls links that stayed up long enough (F10 §5.3, §6). `portland` (the controller-only
 * baseline): a reaction delay after each failure report it recomputes every switch's routes around
 * the failures and installs them (PortLand's fabric manager).
 *
 * The controller runs in the orchestrator process, reached over the same reliable control channel as
 * every command; its messages are not charged to the emulated fabric.
 */

import { F10Controller } from '../arbiter/f10/controller.js';
import type { NodeEvent } from '../core/messages.js';
import type { PhysClock } from '../core/time.js';
import type { F10Command, F10Upcall } from '../switch/f10/module.js';
import type { SchemeSettings } from './scenario/scheme.js';
import type { Topology } from './topology/types.js';

type Settings = Exclude<SchemeSettings, { kind: 'ecmp' }>;

export class F10ControllerHost {
  private readonly controller: F10Controller;
  private readonly torName = new Map<number, string>();
  private readonly torLoc = new Map<string, number>();
  private readonly timers: NodeJS.Timeout[] = [];
  private trafficStart = 0;
  private pendingRoutes = false;
  private lastRoutes = new Map<string, string>();
  epochs = 0;

  constructor(
    private readonly s: Settings,
    private readonly topo: Topology,
    private readonly clock: PhysClock,
    private readonly send: (node: string, command: F10Command) => void,
    private readonly record: (e: NodeEvent) => void,
  ) {
    this.controller = new F10Controller(topo, {
      epochNs: s.reportNs,
      stableNs: s.stableNs,
      predictableDelta: s.predictableDelta,
    });
    for (const n of topo.nodes) {
      if (n.f10?.level === 0) {
        this.torName.set(n.f10.location, n.name);
        this.torLoc.set(n.name, n.f10.location);
      }
    }
  }

  private now(): number {
    return this.clock.now() - this.trafficStart;
  }

  start(trafficStart: number): void {
    this.trafficStart = trafficStart;
    const first = this.clock.realMs(trafficStart + this.s.epochNs - this.clock.now());
    this.timers.push(
      setTimeout(
        () => {
          this.epoch();
          this.timers.push(setInterval(() => this.epoch(), this.clock.realMs(this.s.epochNs)));
        },
        Math.max(0, first),
      ),
    );
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
  }

  /** a node's event: detections feed the controller's failure state */
  onEvent(e: NodeEvent): void {
    const peer = e.peer as string | undefined;
    if (peer === undefined) return;
    if (e.kind === 'port-down-detected') {
      this.controller.linkDown(e.node, peer, e.t);
      if (this.s.kind === 'portland') this.scheduleRoutes();
    } else if (e.kind === 'port-up-detected') {
      this.controller.linkUp(e.node, peer, e.t);
    }
  }

  onUpcall(node: string, t: number, body: unknown): void {
    const u = body as F10Upcall;
    if (u?.kind !== 'traffic' || !Array.isArray(u.bytes)) return;
    const bytes: Record<string, number> = {};
    for (const [loc, n] of u.bytes) {
      const name = this.torName.get(loc);
      if (name !== undefined) bytes[name] = n;
    }
    this.controller.traffic(node, bytes, t);
  }

  /** portland: routes are recomputed once per reaction delay, however many reports arrive in it */
  private scheduleRoutes(): void {
    if (this.pendingRoutes) return;
    this.pendingRoutes = true;
    this.timers.push(
      setTimeout(() => {
        this.pendingRoutes = false;
        this.installRoutes();
      }, this.clock.realMs(this.s.reactionDelayNs)),
    );
  }

  private installRoutes(): void {
    const routes = this.controller.routes(this.now());
    let changed = 0;
    for (const n of this.topo.nodes) {
      if (n.role !== 'switch') continue;
      const mine = routes[n.name] ?? {};
      const list: Array<[number, number[]]> = Object.entries(mine).map(([tor, ports]) => [
        this.torLoc.get(tor)!,
        ports,
      ]);
      const key = JSON.stringify(list);
      if (this.lastRoutes.get(n.name) === key) continue;
      this.lastRoutes.set(n.name, key);
      this.send(n.name, { kind: 'routes', routes: list });
      changed++;
    }
    this.record({ t: this.now(), kind: 'portland-routes', node: 'controller', switches: changed });
  }

  private epoch(): void {
    const now = this.now();
    this.epochs++;
    const back = this.controller.reinstall(now);
    for (const { a, b } of back) {
      for (const [x, y] of [
        [a, b],
        [b, a],
      ]) {
        const node = this.topo.nodes.find((n) => n.name === x);
        if (node?.role !== 'switch') continue;
        for (const p of node.ports) if (p.peer === y) this.send(x, { kind: 'reinstall', port: p.index });
      }
      this.record({ t: now, kind: 'f10-link-reinstalled', node: 'controller', link: [a, b] });
    }
    if (this.s.kind === 'portland') {
      if (back.length > 0) this.installRoutes();
      return;
    }
    const plan = this.controller.epoch(now);
    const perSwitch = new Map<string, Array<[number, number, number]>>();
    for (const h of plan.scheduled) {
      const list = perSwitch.get(h.switch) ?? [];
      list.push([this.torLoc.get(h.srcTor)!, this.torLoc.get(h.dstTor)!, h.port]);
      perSwitch.set(h.switch, list);
    }
    for (const n of this.topo.nodes) {
      if (n.role !== 'switch') continue;
      this.send(n.name, { kind: 'weights', weights: plan.weights[n.name] ?? null });
      this.send(n.name, { kind: 'scheduled', entries: perSwitch.get(n.name) ?? [] });
    }
    this.record({
      t: now,
      kind: 'f10-rebalance',
      node: 'controller',
      placed: plan.placed,
      unplaced: plan.unplaced,
    });
  }
}
