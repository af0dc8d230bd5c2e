/**
 * Route withdrawal between switches, as a BGP-run Clos does it (RFC 7938 §5–§7): a switch that can no
 * longer reach some hosts (it lost the port toward them, or every neighbour it would send them to
 * withdrew them) tells every neighbouring switch, which stops sending those hosts' traffic its way; when
 * a route comes back, so does the announcement. Without it, a spine that lost its link to a leaf keeps
 * taking that leaf's traffic from the other leaves and drops it (a black hole until the link returns).
 *
 * Each update carries the whole set of hosts the sender cannot reach (as a BGP session's table does),
 * so updates are idempotent and a neighbour whose session comes back (its port up again) learns the
 * current state at once. A received update takes `updateDelayNs` to process and install (the
 * control plane's per-hop cost); the switch's own port failures act at once, as the hardware's ECMP
 * group repair does, and are announced right away. Detection is the liveness detector's.
 */
import { type Frame, FrameType, makeFrame, Priority, WireSize } from '../core/frame.js';
import type { RouteUpdateConfig } from '../core/messages.js';
import type { NodeContext } from '../core/node-runtime.js';
import type { EcmpUpDown } from './routing.js';

interface UpdateBody {
  /** the hosts the sender cannot reach */
  w: number[];
}

export class RouteUpdates {
  /** hosts this switch has told its neighbours it cannot reach */
  private unreachable: number[] = [];
  private readonly hosts: readonly number[];
  private readonly neighbours: readonly number[];
  private readonly isNeighbour: boolean[];
  private withdrawals = 0;
  private restorations = 0;
  private updatesSent = 0;
  private updatesReceived = 0;

  constructor(
    private readonly ctx: NodeContext,
    private readonly routing: EcmpUpDown,
    private readonly cfg: RouteUpdateConfig,
  ) {
    const table = ctx.config.routing!;
    this.hosts = table.hosts ?? [];
    this.neighbours = table.neighbours ?? [];
    this.isNeighbour = ctx.config.ports.map((p) => this.neighbours.includes(p.index));
  }

  /** a port of this switch went down or came up: reroute at once, tell the neighbours what changed */
  portChanged(now: number, port: number, up: boolean): void {
    this.update(now);
    // a session that comes back learns the whole state, changed or not
    if (up && this.isNeighbour[port]) this.sendOn(now, port);
  }

  /** a route update from the neighbour on `ingress`: installed once processed */
  onFrame(now: number, ingress: number, frame: Frame): void {
    if (!this.isNeighbour[ingress]) return;
    const body = frame.x as UpdateBody;
    if (!Array.isArray(body?.w) || !body.w.every(Number.isInteger)) throw new Error('bad route update');
    this.updatesReceived++;
    const hosts = body.w.slice();
    this.ctx.sched.at(now + this.cfg.updateDelayNs, (t) => {
      this.routing.setWithdrawn(ingress, hosts);
      this.ctx.emit('route-update-installed', t, {
        peer: this.ctx.config.ports[ingress].peer,
        unreachable: hosts.length,
      });
      this.update(t);
    });
  }

  /** recomputes which hosts this switch reaches; a change goes to every neighbouring switch */
  private update(now: number): void {
    const unreachable = this.hosts.filter((h) => !this.routing.reaches(h));
    const before = new Set(this.unreachable);
    const withdrawn = unreachable.filter((h) => !before.has(h)).length;
    // those that were unreachable and are no longer
    const restored = this.unreachable.length - (unreachable.length - withdrawn);
    if (withdrawn === 0 && restored === 0) return;
    this.withdrawals += withdrawn;
    this.restorations += restored;
    this.unreachable = unreachable;
    this.ctx.emit('routes-updated', now, { unreachable: unreachable.length });
    for (const p of this.neighbours) this.sendOn(now, p);
  }

  private sendOn(now: number, port: number): void {
    const w = this.unreachable;
    const size = Math.min(WireSize.Mtu, WireSize.Small + 4 * w.length);
    const peer = this.ctx.config.ports[port].peerId;
    const f = makeFrame({
      t: FrameType.Routing,
      s: this.ctx.config.id,
      d: peer,
      z: size,
      p: Priority.Control,
      x: { w } satisfies UpdateBody,
    });
    this.updatesSent++;
    this.ctx.ports[port].send(f, now);
  }

  /** counters for the node's metrics */
  report(): Record<string, number> {
    return {
      routeWithdrawals: this.withdrawals,
      routeRestorations: this.restorations,
      routeUpdatesSent: this.updatesSent,
      routeUpdatesReceived: this.updatesReceived,
    };
  }
}
