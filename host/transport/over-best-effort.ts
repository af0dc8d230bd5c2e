/**
 * A scheme's transport over the run's own (`HostPart.transport`, sdk/parts.ts): it carries the flows
 * and frames that are its own and hands the rest to the run's transport, best effort (flows marked
 * `bestEffort`, frames it does not know), and answers for both in sender statistics, partial paths
 * and stop. A scheme writes its own part (ExpressPass's and Harmony's transports extend it).
 */

import type { Frame } from '../../core/frame.js';
import type { FlowSpec } from '../../core/messages.js';
import { type PartialReceiver, partialPathsOver, type SenderStats, type Transport } from './types.js';

export abstract class TransportOverBestEffort implements Transport {
  constructor(
    /** the run's transport, for what is not this transport's own */
    protected readonly bestEffort: Transport,
  ) {}

  /** a flow of its own (not marked best effort) starts */
  protected abstract startOwnFlow(flow: FlowSpec, now: number): void;
  /** handles `frame` when it is this transport's own, saying whether it was */
  protected abstract ownFrame(frame: Frame, now: number): boolean;
  /** a flow of its own's sender statistics */
  protected abstract ownSenderStats(id: number): SenderStats | undefined;
  /** its own flows' receiving sides, for the partial paths */
  protected abstract receiving(): Iterable<PartialReceiver>;
  /** cancels its own timers */
  protected abstract stopOwn(): void;

  startFlow(flow: FlowSpec, now: number): void {
    if (flow.bestEffort) this.bestEffort.startFlow(flow, now);
    else this.startOwnFlow(flow, now);
  }

  onFrame(frame: Frame, now: number): void {
    if (!this.ownFrame(frame, now)) this.bestEffort.onFrame(frame, now);
  }

  senderStats(id: number): SenderStats | undefined {
    // a flow handed to best effort (from the start, or after its own transport gave up on it): the
    // best-effort transport's retransmissions tell how it went
    return this.bestEffort.senderStats(id) ?? this.ownSenderStats(id);
  }

  partialPaths(): Array<[number, number[], number]> {
    return partialPathsOver(this.receiving(), this.bestEffort);
  }

  stop(): void {
    this.stopOwn();
    this.bestEffort.stop();
  }
}
