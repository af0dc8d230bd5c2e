/**
 * The wire fault filter (docs/architecture.md: the fault layer). It sits below an egress port, on one direction of a
 * link, and is invisible to protocol code: it can take the direction down, lose frames at random,
 * corrupt them (the receiver's frame check then discards them) and add delay; and it carries the
 * link's impairments (core/impair.ts, netem's set): the link's own, from the scenario, and those a
 * timeline or chaos action sets over them. Only the orchestrator's fault commands change it;
 * protocols must detect the consequences themselves.
 */
import { type Frame, FrameType } from './frame.js';
import { ChanceModel, DelayModel, type Impairment, LossModel, LossState, reaches } from './impair.js';

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
  /**
   * impairments an action sets over the link's own: each model it names replaces the link's (a
   * delay adds to the link's own); `link-up` takes them away
   */
  impair?: Impairment;
}

export const WIRE_OK: Readonly<WireState> = Object.freeze({
  down: false,
  loss: 0,
  corrupt: 0,
  delayNs: 0,
  ptpLoss: 0,
});

export const WireVerdict = { Pass: 0, Down: 1, Lost: 2 } as const;

/** a seeded stream of uniforms in [0, 1) for each model (`salt`): models never share draws */
export type Streams = (salt: number) => () => number;

/** the models one impairment set draws from, each on its stream (salts offset by `salt`) */
class Models {
  readonly delay: DelayModel | null;
  readonly loss: LossModel | null;
  readonly duplicate: ChanceModel | null;
  readonly reorder: ChanceModel | null;
  readonly corrupt: ChanceModel | null;

  constructor(
    readonly spec: Impairment,
    streams: Streams,
    salt: number,
  ) {
    this.delay = spec.delay ? new DelayModel(spec.delay, streams(salt + 1)) : null;
    this.loss = spec.loss ? new LossModel(spec.loss, streams(salt + 2)) : null;
    this.duplicate = spec.duplicate ? new ChanceModel(spec.duplicate, streams(salt + 3)) : null;
    this.reorder = spec.reorder ? new ChanceModel(spec.reorder, streams(salt + 4)) : null;
    this.corrupt = spec.corrupt ? new ChanceModel(spec.corrupt, streams(salt + 5)) : null;
  }

  /** whether these impairments act on `frame` (a gray failure reaches some types or flows only) */
  reach(frame: Frame): Models | null {
    return reaches(this.spec, frame.t, frame.s, frame.d, frame.f) ? this : null;
  }
}

/** what the impairments did on this direction: the summary's `impairments` */
export interface ImpairCounts {
  /** frames given extra delay by a delay model */
  delayed: number;
  /** frames that arrive before a frame sent ahead of them on this direction */
  reordered: number;
  /** copies sent */
  duplicated: number;
  /** frames lost by a loss model in its good state (all of a `random` model's) */
  lostGood: number;
  /** frames lost by a Gilbert–Elliott model in its bad state */
  lostBad: number;
  /** frames a corruption model corrupted */
  corrupted: number;
}

/** counts of nothing done yet */
export function noImpairCounts(): ImpairCounts {
  return { delayed: 0, reordered: 0, duplicated: 0, lostGood: 0, lostBad: 0, corrupted: 0 };
}

const NO_STREAMS: Streams = () => () => {
  throw new Error('WireFilter: impairments need seeded streams');
};

export class WireFilter {
  state: WireState = { ...WIRE_OK };
  droppedDown = 0;
  droppedLoss = 0;
  corrupted = 0;
  readonly counts: ImpairCounts = noImpairCounts();
  /** the link has impairments of its own or set by an action (the port then asks for a rate and copies) */
  impaired: boolean;
  private readonly base: Models | null;
  private fault: Models | null = null;
  /** the latest arrival on this direction so far */
  private lastArrival = Number.NEGATIVE_INFINITY;
  /** the arrival the last frame had before the impairments' delay (a duplicate draws its own from it) */
  private plainArrival = 0;

  constructor(
    private readonly random: () => number,
    private readonly streams: Streams = NO_STREAMS,
    /** the link's own impairments (the scenario's `links`): the state `reset` returns to */
    base?: Impairment,
  ) {
    this.base = base && Object.keys(base).length > 0 ? new Models(base, streams, 0) : null;
    this.impaired = this.base !== null;
  }

  set(patch: Partial<WireState>): void {
    this.state = { ...this.state, ...patch };
    if ('impair' in patch) {
      const spec = patch.impair;
      this.fault = spec && Object.keys(spec).length > 0 ? new Models(spec, this.streams, 8) : null;
      this.impaired = this.base !== null || this.fault !== null;
    }
  }

  reset(): void {
    this.state = { ...WIRE_OK };
    this.fault = null;
    this.impaired = this.base !== null;
  }

  /** the rate the port serializes at: the link's, or an impairment's lower one */
  rateBps(linkBps: number): number {
    const r = this.fault?.spec.rateBps ?? this.base?.spec.rateBps;
    return r !== undefined && r < linkBps ? r : linkBps;
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
    if (!this.impaired) return WireVerdict.Pass;
    return this.impair(frame);
  }

  /**
   * A copy of the frame that just passed, when a duplication model draws one (its own delay drawn);
   * null otherwise. The port sends it right after the original.
   */
  duplicateOf(frame: Frame): Frame | null {
    const m = this.fault?.reach(frame)?.duplicate ?? this.base?.reach(frame)?.duplicate;
    if (!m?.next()) return null;
    this.counts.duplicated++;
    const copy = { ...frame, a: this.plainArrival };
    this.delay(copy, this.fault?.reach(copy) ?? null, this.base?.reach(copy) ?? null);
    return copy;
  }

  /** netem's order: loss, corruption, then the delay (or none, for a frame reordering sends ahead) */
  private impair(frame: Frame): number {
    const f = this.fault?.reach(frame) ?? null;
    const b = this.base?.reach(frame) ?? null;
    const loss = f?.loss ?? b?.loss;
    if (loss) {
      const lost = loss.next();
      if (lost !== LossState.None) {
        this.droppedLoss++;
        if (lost === LossState.Bad) this.counts.lostBad++;
        else this.counts.lostGood++;
        return WireVerdict.Lost;
      }
    }
    const corrupt = f?.corrupt ?? b?.corrupt;
    if (corrupt?.next() && frame.c === 0) {
      frame.c = 1;
      this.corrupted++;
      this.counts.corrupted++;
    }
    this.plainArrival = frame.a;
    this.delay(frame, f, b);
    return WireVerdict.Pass;
  }

  private delay(frame: Frame, f: Models | null, b: Models | null): void {
    const reorder = f?.reorder ?? b?.reorder;
    // a frame reordering picks goes without the models' delay (netem: "sent immediately")
    if (!reorder?.next()) {
      const extra = (b?.delay?.next() ?? 0) + (f?.delay?.next() ?? 0);
      if (extra > 0) {
        this.counts.delayed++;
        frame.a += extra;
      }
      // a delay that keeps order holds the frame behind the one before it
      const inOrder = (b?.delay && !b.delay.spec.reorder) || (f?.delay && !f.delay.spec.reorder);
      if (inOrder && frame.a < this.lastArrival) frame.a = this.lastArrival;
    }
    if (frame.a < this.lastArrival) this.counts.reordered++;
    else this.lastArrival = frame.a;
  }
}
