/**
 * Switch forwarding modules. `Routing` is the interface schemes replace (F10 brings its own); the
 * factory picks the variant from the node config. The baseline is up/down routing with per-flow ECMP:
 * a destination below goes down its port(s), anything else goes up; among candidates, a hash of the
 * flow picks one, skipping ports the liveness detector declared down (flows on live ports stay put).
 */
import type { Frame } from '../core/frame.js';
import type { RoutingTable } from '../core/messages.js';

export interface Routing {
  /** egress port for `frame` that arrived on `ingress`, or -1 when no live route exists */
  route(frame: Frame, ingress: number): number;
  portDown(port: number): void;
  portUp(port: number): void;
}

export interface RoutingInit {
  kind: 'ecmp';
  table: RoutingTable;
  portCount: number;
  /** per-switch salt so that consecutive tiers do not polarize on the same hash */
  salt: number;
}

export function createRouting(init: RoutingInit): Routing {
  switch (init.kind) {
    case 'ecmp':
      return new EcmpUpDown(init.table, init.portCount, init.salt);
  }
}

/** 32-bit mix of (src, dst, flow, salt): the per-flow ECMP hash (murmur3 finalizer). */
export function flowHash(src: number, dst: number, flow: number, salt: number): number {
  let h =
    (salt ^ Math.imul(src + 1, 0x9e3779b1) ^ Math.imul(dst + 7, 0x85ebca77) ^ Math.imul(flow, 0xc2b2ae3d)) >>>
    0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export class EcmpUpDown implements Routing {
  private readonly alive: boolean[];
  private readonly down: Map<number, number[]>;
  private readonly up: number[];
  /** live subsets, recomputed only when a port changes state */
  private liveUp: number[];
  private liveDown = new Map<number, number[]>();
  /** per port, the hosts its neighbour withdrew (route updates, switch/route-updates.ts); null: none */
  private readonly withdrawn: Array<ReadonlySet<number> | null>;
  /** live candidates of the hosts some neighbour withdrew, without the ports that withdrew them */
  private readonly liveExcept = new Map<number, number[]>();

  constructor(
    table: RoutingTable,
    portCount: number,
    protected readonly salt: number,
  ) {
    this.alive = new Array(portCount).fill(true);
    this.withdrawn = new Array(portCount).fill(null);
    this.down = new Map(Object.entries(table.down).map(([k, v]) => [Number(k), v]));
    this.up = table.up;
    this.liveUp = this.up;
    this.refresh();
  }

  /**
   * Resilient hashing: the hash first picks among all candidates, as if every port were alive, so a
   * port failure moves only the flows that were on it; those rehash over the live candidates.
   */
  route(frame: Frame, _ingress: number): number {
    const d = frame.d;
    const all = this.down.get(d) ?? this.up;
    const n = all.length;
    if (n === 0) return -1;
    const h = this.hash(frame);
    const first = all[h % n];
    if (this.alive[first] && this.withdrawn[first]?.has(d) !== true) return first;
    const live = this.live(d);
    if (live.length === 0) return -1;
    return live[(h >>> 8) % live.length];
  }

  /** the per-flow hash ECMP picks a port by (a scheme may hash other fields: symmetric ECMP) */
  protected hash(frame: Frame): number {
    return flowHash(frame.s, frame.d, frame.f, this.salt);
  }

  /** the live ports on a shortest path toward host `dst` whose neighbours have not withdrawn it */
  live(dst: number): number[] {
    return this.liveExcept.get(dst) ?? (this.down.has(dst) ? this.liveDown.get(dst)! : this.liveUp);
  }

  portDown(port: number): void {
    this.alive[port] = false;
    this.refresh();
  }

  portUp(port: number): void {
    this.alive[port] = true;
    this.refresh();
  }

  /** the neighbour on `port` can reach none of `hosts` (replacing what it said before) */
  setWithdrawn(port: number, hosts: readonly number[]): void {
    this.withdrawn[port] = hosts.length > 0 ? new Set(hosts) : null;
    this.refresh();
  }

  /** whether a live route toward host `dst` is left */
  reaches(dst: number): boolean {
    return this.live(dst).length > 0;
  }

  private refresh(): void {
    this.liveUp = this.up.filter((p) => this.alive[p]);
    this.liveDown.clear();
    for (const [host, ports] of this.down)
      this.liveDown.set(
        host,
        ports.filter((p) => this.alive[p]),
      );
    this.liveExcept.clear();
    for (const set of this.withdrawn) {
      if (set === null) continue;
      for (const host of set) {
        if (this.liveExcept.has(host)) continue;
        const live = this.down.has(host) ? this.liveDown.get(host)! : this.liveUp;
        this.liveExcept.set(
          host,
          live.filter((p) => this.withdrawn[p]?.has(host) !== true),
        );
      }
    }
  }
}
