/**
 * Primary/backup for the F10 controller (F10 §8: "it can be replicated with a primary/backup approach,
 * with the benefit that data like traffic matrices ... and liveness of switches is soft-state"), as
 * pure logic: which controller acts, and when a standby takes over. No I/O, no clock.
 *
 * Terms: controller i of n owns the terms t with t mod n = i; the primary (arb0) acts in term 0 from
 * the start. Commands carry their sender's term and a switch obeys the highest term it has heard (a
 * lower one is ignored), so two controllers never command one switch at once. Switches report to
 * every controller, so each standby holds the same soft state as the acting one.
 *
 * Detection, over the emulated control links and their faults: each switch's own detector watches
 * its control link to every controller, and its `state` reports (at once on a change, and every
 * report period) tell the others which of those links it holds down and which term it obeys. A
 * standby takes over when more than half of all switches say their link to the acting controller is
 * down: one switch's cut control link (or a minority's) moves nothing, and a standby cut off from
 * most switches cannot hear a majority, so it never acts beside a primary that still reaches them.
 * A controller that hears a switch report a higher term than its own stands down (a deposed primary
 * that comes back: paused and resumed, or its links repaired).
 */

export type SuccessionChange =
  /** this controller acts from now on, in `term`; `switches` reported the acting one's link down */
  | { kind: 'takeover'; term: number; from: number; switches: number }
  /** this controller acted and heard of a higher term: it stops commanding */
  | { kind: 'step-down'; term: number; to: number };

export class Succession {
  /** the highest term this controller knows of */
  private current = 0;
  /** per switch: the controllers whose control link it last reported down */
  private readonly lost = new Map<string, ReadonlySet<number>>();

  /**
   * @param self this controller's index (arb0 = 0)
   * @param controllers how many controllers there are
   * @param switches how many switches report (a majority of them moves a takeover)
   */
  constructor(
    readonly self: number,
    readonly controllers: number,
    readonly switches: number,
  ) {
    if (!(Number.isInteger(self) && self >= 0 && self < controllers))
      throw new RangeError(`Succession: controller index ${self} outside 0..${controllers - 1}`);
  }

  get term(): number {
    return this.current;
  }

  /** the index of the controller that owns `term` */
  owner(term: number): number {
    return term % this.controllers;
  }

  get acting(): boolean {
    return this.owner(this.current) === this.self;
  }

  /**
   * Switch `sw`'s state report: the term it obeys and the controllers whose control link its detector
   * holds down (undefined: it did not say). Returns what changed here, if anything.
   */
  heard(sw: string, term: number | undefined, ctl: readonly number[] | undefined): SuccessionChange | null {
    if (ctl !== undefined) this.lost.set(sw, new Set(ctl));
    if (term !== undefined && term > this.current) {
      const wasActing = this.acting;
      this.current = term;
      if (wasActing && !this.acting) return { kind: 'step-down', term, to: this.owner(term) };
    }
    if (this.acting) return null;
    const from = this.owner(this.current);
    let cut = 0;
    for (const s of this.lost.values()) if (s.has(from)) cut++;
    if (2 * cut <= this.switches) return null;
    // the next term this controller owns
    this.current += 1 + ((this.self - this.owner(this.current + 1) + this.controllers) % this.controllers);
    return { kind: 'takeover', term: this.current, from, switches: cut };
  }
}
