/**
 * Lateness in order (the jitter models, docs/clocks.md): each item handed over at `now` is taken up a
 * drawn delay later, but never before the item handed over before it, as a late-running loop would
 * take up its queue. Draws below zero count as no delay.
 */
export class InOrderLateness {
  private floor = 0;

  constructor(private readonly draw: () => number) {}

  /** when an item handed over at `now` is taken up (>= now) */
  next(now: number): number {
    const t = Math.max(now + Math.max(0, this.draw()), this.floor);
    this.floor = t;
    return t;
  }

  /** when an item that draws no delay of its own, handed over at `now`, is taken up: after those before it */
  after(now: number): number {
    const t = Math.max(now, this.floor);
    this.floor = t;
    return t;
  }
}
