/**
 * Harmony on a host (NSDI'24 §3.1–§3.2, §4): an RPC-style transport where every flow is a message that
 * ends as complete, reject or failure.
 *
 * Sender: a message arrival sends a `request`. An rsvp takes one of the K send slots (none free: a
 * reject back along its path) and the message's data goes out on it, paced at B/K, source-routed
 * along the VLs the rsvp reserved; the grant's last byte is followed by a `complete` on the same path.
 * Several grants of one message pull segments from one queue (multi-slot).
 *
 * Receiver: K receive slots. A request with a slot free gets an rsvp at once; otherwise it waits in
 * `pending_requests` and is served oldest first when a slot frees, or rejected at δadmission (node
 * clock). A `complete` frees the slot and goes back to the sender; with a free slot and nothing pending,
 * an active message gets one more slot for one BDP of data.
 *
 * Faults (§3.2): delays are bounded, so absence is news. The receiver expects a grant's first byte
 * within two one-way bounds of its rsvp and every next one within the slot's pacing gap plus one
 * bound; the sender expects an answer to a request within δadmission and two bounds, and the complete
 * back within two bounds of its own. A silence is a failure: the receiver sends `failure`, the sender
 * aborts the message's grants (rejects along their paths free the VLs and slots) and the message is
 * asked again, sent best effort, or given up, as the scenario says. Timers run on the node clock, so
 * a clock fault on a host moves them.
 *
 * The sending side is host/sender.ts, the receiving side host/receiver.ts, what they share
 * host/host-part.ts and their state host/state.ts; this class hands each frame to its side.
 */
import {
  type FlowSpec,
  type Frame,
  FrameType,
  type NodeClock,
  type PartialReceiver,
  type SenderStats,
  type Transport,
  type TransportComponents,
  TransportOverBestEffort,
} from '../../../sdk/node.js';
import { Ctl, HarmonyClass, type HarmonyControl, type HarmonyData, type HarmonyHostConfig } from '../wire.js';
import { HarmonyReceiver } from './receiver.js';
import { HarmonySender } from './sender.js';
import type { HarmonyHostSection } from './state.js';

export class HarmonyTransport extends TransportOverBestEffort {
  private readonly clock: NodeClock;
  private readonly s: HarmonyHostSection = {
    submitted: 0,
    completed: 0,
    rejected: 0,
    failed: 0,
    retried: 0,
    bestEffort: 0,
    rsvpSent: 0,
    rejectedAtHost: 0,
    rejectedBySender: 0,
    extraGrants: 0,
    revoked: 0,
    failures: [],
    outcomes: [],
    queueing: [],
    firstSent: [],
    open: [],
  };
  private readonly sender: HarmonySender;
  private readonly receiver: HarmonyReceiver;

  constructor(
    cfg: HarmonyHostConfig,
    c: TransportComponents,
    /** best-effort delivery for messages Harmony rejected or failed (`onReject: best-effort`) */
    bestEffort: Transport,
  ) {
    super(bestEffort);
    this.clock = c.clock;
    this.sender = new HarmonySender(cfg, c, bestEffort, this.s);
    this.receiver = new HarmonyReceiver(cfg, c, bestEffort, this.s);
  }

  protected startOwnFlow(flow: FlowSpec): void {
    this.sender.startFlow(flow);
  }

  protected ownFrame(frame: Frame): boolean {
    const x = frame.x as HarmonyControl | HarmonyData | null;
    if (frame.t === FrameType.Control && x !== null && typeof x === 'object' && 'h' in x)
      this.onControl(frame, x);
    else if (
      frame.t === FrameType.Data &&
      frame.p === HarmonyClass.Data &&
      x !== null &&
      typeof x === 'object' &&
      'g' in x
    )
      this.receiver.onData(frame);
    else return false;
    return true;
  }

  private onControl(frame: Frame, x: HarmonyControl): void {
    switch (x.h) {
      case Ctl.Request:
        this.receiver.onRequest(frame, x);
        break;
      case Ctl.Rsvp:
        this.sender.onRsvp(frame, x);
        break;
      case Ctl.Complete:
        this.receiver.onComplete(frame, x);
        break;
      case Ctl.CompleteBack:
        this.sender.onCompleteBack(frame, x);
        break;
      case Ctl.Failure:
        this.sender.onFailure(frame, x);
        break;
      case Ctl.Revoke:
        this.sender.onRevoke(x);
        break;
      case Ctl.Reject:
        // a reject names its message: the receiving side frees a slot, the sending side hears the verdict
        if (this.receiver.recvGrants.has(x.g)) this.receiver.onReceiverReject(x);
        else this.sender.onSenderReject(frame, x);
        break;
    }
  }

  protected ownSenderStats(id: number): SenderStats | undefined {
    return this.sender.out.get(id);
  }

  protected receiving(): Iterable<PartialReceiver> {
    return this.receiver.in.values();
  }

  report(): HarmonyHostSection {
    const open: Array<[number, number]> = [];
    for (const m of this.sender.out.values()) if (!m.ended) open.push([m.spec.id, m.attempt]);
    const queueing: Array<[number, number]> = [];
    for (const m of this.receiver.in.values()) if (m.count > 0) queueing.push([m.id, m.maxQueueingNs]);
    return { ...this.s, open, queueing };
  }

  protected stopOwn(): void {
    for (const m of this.sender.out.values()) this.clock.cancel(m.answer);
    for (const g of this.sender.sendGrants.values()) {
      this.clock.cancel(g.pace);
      this.clock.cancel(g.back);
    }
    for (const g of this.receiver.recvGrants.values()) this.clock.cancel(g.watchdog);
    for (const p of this.receiver.pending) this.clock.cancel(p.timer);
    for (const m of this.sender.out.values()) this.clock.cancel(m.slotTimer);
    this.clock.cancel(this.receiver.serveTimer);
  }
}
