/**
 * Slot bookkeeping for fixed-capacity rings of parallel typed arrays (breakpoints, clock anchors):
 * which slot is oldest, which newest, how many are kept. The caller owns the arrays; this only hands
 * out indices, so hot paths stay allocation-free.
 */
export class RingSlots {
  /** slot of the oldest entry */
  first = 0;
  count = 0;
  /** slot of the newest entry */
  last = 0;

  constructor(readonly capacity: number) {}

  /** The slot for a new newest entry; when full, the oldest slot is reused. */
  claim(): number {
    let i: number;
    if (this.count < this.capacity) {
      i = (this.first + this.count) % this.capacity;
      this.count++;
    } else {
      i = this.first;
      this.first = (this.first + 1) % this.capacity;
    }
    this.last = i;
    return i;
  }

  /** Forgets the newest entry. */
  dropNewest(): void {
    if (this.count === 0) return;
    this.count--;
    this.last = (this.last + this.capacity - 1) % this.capacity;
  }

  /** Slot of the k-th oldest entry (0 = oldest). */
  slot(k: number): number {
    return (this.first + k) % this.capacity;
  }

  /** Slot just before `i` (toward older entries). */
  older(i: number): number {
    return (i + this.capacity - 1) % this.capacity;
  }
}
