/**
 * The wire fault filter (docs/architecture.md: the fault layer). It sits below an egress port, on one direction of a
 * link, and is invisible to protocol code: it can take the direction down, lose frames at random,
 * corrupt them (the receiver's frame check then discards them) and add delay. Only the orchestrator's
 * fault commands change it; protocols must detect the consequences themselves.
 */
import { type Frame, FrameType } from './frame.js';

export interface WireState {
  down: boolean;
  /** probability that a frame is lost */
  loss: number;
  /** probability that a frame arrives corrupted */
  corrupt: number;
  /** extra one-way delay, virtual ns */
  delayNs: number;
  /** probability that a PTP frame is lost (data untouched) */
  ptpLoss: number;
}

export const WIRE_OK: Readonly<WireState> = Object.freeze({
  down: false,
  loss: 0,
  corrupt: 0,
  delayNs: 0,
  ptpLoss: 0,
});

export const WireVerdict = { Pass: 0, Down: 1, Lost: 2 } as const;

export class WireFilter {
  state: WireState = { ...WIRE_OK };
  droppedDown = 0;
  droppedLoss = 0;
  corrupted = 0;

  constructor(private readonly random: () => number) {}

  set(patch: Partial<WireState>): void {
    this.state = { ...this.state, ...patch };
  }

  reset(): void {
    this.state = { ...WIRE_OK };
  }

  /** Applies the filter to a frame leaving on this direction; may mark it corrupted or delay it. */
  apply(frame: Frame): number {
    const s = this.state;
    if (s.down) {
      this.droppedDown++;
      return WireVerdict.Down;
    }
    if (
      (s.loss > 0 && this.random() < s.loss) ||
      (s.ptpLoss > 0 && frame.t === FrameType.Ptp && this.random() < s.ptpLoss)
    ) {
      this.droppedLoss++;
      return WireVerdict.Lost;
    }
    if (s.corrupt > 0 && this.random() < s.corrupt) {
      frame.c = 1;
      this.corrupted++;
    }
    if (s.delayNs > 0) frame.a += s.delayNs;
    return WireVerdict.Pass;
  }
}
