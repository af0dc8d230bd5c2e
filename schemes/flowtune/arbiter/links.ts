/**
 * The links of a Flowtune fabric as the allocator numbers them (and the summary's offline optimum):
 * per host its uplink (2h) and downlink (2h + 1); per rack and spine the rack's uplink to that spine
 * and the spine's downlink to the rack. A flowlet's path is its source's uplink, the two fabric links
 * through its spine when it leaves the rack, and its destination's downlink.
 */
import type { FlowtuneFabric } from '../wire.js';

export class FabricLinks {
  readonly capacityBps: Float64Array;
  private readonly base: number;

  constructor(readonly fabric: FlowtuneFabric) {
    const h = fabric.hosts.length;
    this.base = 2 * h;
    this.capacityBps = new Float64Array(this.base + 2 * fabric.racks * fabric.spines);
    fabric.hosts.forEach((x, i) => {
      this.capacityBps[2 * i] = x.rateBps;
      this.capacityBps[2 * i + 1] = x.rateBps;
    });
    this.capacityBps.fill(fabric.fabricRateBps, this.base);
  }

  /** the rack's uplink to `spine`, and the spine's downlink to the rack */
  rackUp(rack: number, spine: number): number {
    return this.base + 2 * (rack * this.fabric.spines + spine);
  }

  rackDown(rack: number, spine: number): number {
    return this.rackUp(rack, spine) + 1;
  }

  /** the links of a flowlet from `src` to `dst` through `spine` */
  path(src: number, dst: number, spine: number): number[] {
    const rs = this.fabric.hosts[src].rack;
    const rd = this.fabric.hosts[dst].rack;
    if (rs === rd || this.fabric.spines === 0) return [2 * src, 2 * dst + 1];
    return [2 * src, this.rackUp(rs, spine), this.rackDown(rd, spine), 2 * dst + 1];
  }

  /** a name for link `l` (reports) */
  name(l: number): string {
    if (l < this.base) return `h${l >> 1}-${l & 1 ? 'down' : 'up'}`;
    const k = (l - this.base) >> 1;
    const rack = Math.floor(k / this.fabric.spines);
    const spine = k % this.fabric.spines;
    return `rack${rack}-spine${spine}-${(l - this.base) & 1 ? 'down' : 'up'}`;
  }
}
