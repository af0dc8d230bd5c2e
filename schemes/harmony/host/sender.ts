/**
 * Harmony's sending side on a host (host/transport.ts; NSDI'24 §3.1–§3.2): a message's request, the
 * rsvps that take its K send slots and pace its data along the reserved VLs, the completes, rejects,
 * revokes and failures, and a message asked again, sent best effort or given up.
 */
import {
  type FlowSpec,
  type Frame,
  FrameType,
  makeFrame,
  segmentBytes,
  WireSize,
} from '../../../sdk/node.js';
import { Ctl, FailureWhy, HarmonyClass, type HarmonyControl, type HarmonyData, RejectWhy } from '../wire.js';
import { HarmonyHostPart } from './host-part.js';
import { Outcome, OutMsg, SendGrant } from './state.js';

export class HarmonySender extends HarmonyHostPart {
  readonly out = new Map<number, OutMsg>();
  readonly sendGrants = new Map<number, SendGrant>();
  private readonly waitingSlot: OutMsg[] = [];
  private sendUsed = 0;

  /** a message of Harmony's own (background traffic went to best effort: TransportOverBestEffort) */
  startFlow(flow: FlowSpec): void {
    const m = new OutMsg(flow);
    this.out.set(flow.id, m);
    this.s.submitted++;
    if (this.cfg.rejectAfter === 'window') m.deadline = this.clock.now() + this.cfg.deltaAdmissionNs;
    this.ask(m);
  }

  /** still inside its admission window and not started: a reject is asked again, not final */
  private inWindow(m: OutMsg): boolean {
    return m.deadline >= 0 && m.framesSent === 0 && this.clock.now() < m.deadline;
  }

  /** a new request; after a failure every segment again, after a revoked last grant the rest */
  private ask(m: OutMsg, fromStart = true): void {
    m.attempt++;
    if (fromStart) m.next = 0;
    this.control(m.spec.dst, m.spec.id, HarmonyClass.Second, {
      h: Ctl.Request,
      g: 0,
      a: m.attempt,
      b: m.spec.size,
      ...(this.inWindow(m) && { r: m.deadline - this.clock.now() }),
    });
    // an rsvp, a reject or (for a message already delivered) a complete comes within this
    const bound = this.cfg.deltaAdmissionNs + 3 * this.cfg.oneWayNs;
    m.answer = this.clock.after(bound, this.noAnswer, m, m.attempt);
  }

  private readonly noAnswer = (_now: number, m: unknown, attempt: unknown): void => {
    const msg = m as OutMsg;
    msg.answer = null;
    if (msg.ended || msg.attempt !== attempt || msg.grants.size > 0) return;
    this.fail(msg, FailureWhy.NoAnswer);
  };

  onRsvp(f: Frame, x: HarmonyControl): void {
    const hops = Array.isArray(x.hops) ? x.hops : [];
    const m = this.out.get(f.f);
    const budget = typeof x.b === 'number' && x.b >= 0 ? x.b : Number.POSITIVE_INFINITY;
    const stale = m === undefined || m.ended || m.attempt !== x.a || m.next >= m.nSeg;
    // a base rsvp (a new message's) takes a send slot back from an extra grant (§3.2: extras must not
    // block later requests); the extra's message goes on on its base
    if (!stale && this.sendUsed >= this.cfg.K && budget === Number.POSITIVE_INFINITY) {
      const extra = this.revocableSend();
      if (extra !== null) this.revokeSend(extra);
    }
    if (stale || this.sendUsed >= this.cfg.K) {
      this.s.rejectedBySender++;
      this.alongPath(f.s, f.f, hops, {
        h: Ctl.Reject,
        g: x.g,
        a: x.a,
        hops,
        w: stale ? RejectWhy.Stale : RejectWhy.SenderBusy,
      });
      // the message's only grant, refused for want of a slot: it asks again when one frees
      if (!stale && m!.grants.size === 0) {
        this.clock.cancel(m!.answer);
        m!.answer = null;
        m!.why = RejectWhy.SenderBusy;
        m!.whySwitch = -1;
        this.rejected(m!);
      }
      return;
    }
    this.clock.cancel(m.answer);
    m.answer = null;
    this.sendUsed++;
    m.switches = hops.length;
    const g = new SendGrant(x.g, m, hops, budget);
    m.grants.add(g);
    this.sendGrants.set(x.g, g);
    this.tick(0, g);
  }

  /** sends the grant's next segment and paces the one after at B/K */
  private readonly tick = (_now: number, grant: unknown): void => {
    const g = grant as SendGrant;
    g.pace = null;
    if (g.closed) return;
    const m = g.msg;
    // an extra grant left alone (the message's first rsvp was refused after it came): it carries the rest
    if (g.budget <= 0 && !this.hasOpenBase(m)) g.budget = Number.POSITIVE_INFINITY;
    if (m.next >= m.nSeg || g.budget <= 0) {
      this.finish(g);
      return;
    }
    const seq = m.next++;
    const bytes = segmentBytes(m.spec.size, seq);
    g.budget -= bytes - WireSize.Header;
    if (m.framesSent++ === 0) this.s.firstSent.push([m.spec.id, this.c.physNow()]);
    this.c.nic.send(
      makeFrame({
        t: FrameType.Data,
        s: this.c.hostId,
        d: m.spec.dst,
        f: m.spec.id,
        q: seq,
        z: bytes,
        p: HarmonyClass.Data,
        r: g.route(),
        x: { g: g.key, qd: 0 } satisfies HarmonyData,
      }),
    );
    if (m.next >= m.nSeg || (g.budget <= 0 && this.hasOpenBase(m))) this.finish(g);
    else g.pace = this.clock.after(bytes * this.slotNsPerByte, this.tick, g);
  };

  /** a grant still sending without a byte budget carries whatever the extra ones leave */
  private hasOpenBase(m: OutMsg): boolean {
    for (const g of m.grants) if (!g.closed && g.budget === Number.POSITIVE_INFINITY) return true;
    return false;
  }

  /** an open extra grant whose message goes on without it (its base still sending), oldest first */
  private revocableSend(): SendGrant | null {
    for (const g of this.sendGrants.values())
      if (!g.closed && !g.completed && g.budget !== Number.POSITIVE_INFINITY && this.hasOpenBase(g.msg))
        return g;
    return null;
  }

  /**
   * Gives an extra grant back: it sends no more (its unsent bytes stay in the message's queue for the
   * base), and a reject along its path frees its virtual links and the receiver's slot.
   */
  private revokeSend(g: SendGrant): void {
    const m = g.msg;
    m.grants.delete(g);
    this.sendGrants.delete(g.key);
    this.clock.cancel(g.back);
    g.back = null;
    this.alongPath(m.spec.dst, m.spec.id, g.hops, {
      h: Ctl.Reject,
      g: g.key,
      a: m.attempt,
      hops: g.hops,
      w: RejectWhy.Revoked,
    });
    this.freeSendSlot(g);
    this.s.revoked++;
  }

  /** the receiver asks an extra grant back (a request waits for its slot) */
  onRevoke(x: HarmonyControl): void {
    const g = this.sendGrants.get(x.g);
    if (g === undefined || g.closed || g.completed || g.budget === Number.POSITIVE_INFINITY) return;
    if (this.hasOpenBase(g.msg)) this.revokeSend(g);
  }

  /** the grant's last byte is out: complete along its path, free the slot, expect the complete back */
  private finish(g: SendGrant): void {
    g.completed = true;
    this.alongPath(g.msg.spec.dst, g.msg.spec.id, g.hops, {
      h: Ctl.Complete,
      g: g.key,
      a: g.msg.attempt,
      hops: g.hops,
    });
    this.freeSendSlot(g);
    g.back = this.clock.after(3 * this.cfg.oneWayNs, this.noCompleteBack, g);
  }

  private freeSendSlot(g: SendGrant): void {
    if (g.closed) return;
    g.closed = true;
    this.clock.cancel(g.pace);
    g.pace = null;
    this.sendUsed--;
    // a message refused for want of a slot asks again now
    while (this.sendUsed < this.cfg.K && this.waitingSlot.length > 0) {
      const m = this.waitingSlot.shift()!;
      m.waiting = false;
      this.clock.cancel(m.slotTimer);
      m.slotTimer = null;
      if (!m.ended) this.ask(m);
    }
  }

  private readonly noCompleteBack = (_now: number, grant: unknown): void => {
    const g = grant as SendGrant;
    g.back = null;
    this.sendGrants.delete(g.key);
    if (!g.msg.ended && g.msg.grants.has(g)) this.fail(g.msg, FailureWhy.NoComplete);
  };

  onCompleteBack(f: Frame, x: HarmonyControl): void {
    const m = this.out.get(f.f);
    const g = this.sendGrants.get(x.g);
    if (g !== undefined) {
      this.clock.cancel(g.back);
      g.back = null;
      this.sendGrants.delete(x.g);
      g.msg.grants.delete(g);
    }
    if (m === undefined || m.ended) return;
    if (x.done === 1) {
      this.clock.cancel(m.answer);
      m.answer = null;
      this.end(m, Outcome.Complete);
    }
  }

  onSenderReject(f: Frame, x: HarmonyControl): void {
    if (x.w === RejectWhy.Revoked) {
      this.onSwitchRevoke(x);
      return;
    }
    const m = this.out.get(f.f);
    if (m === undefined || m.ended || m.attempt !== x.a) return;
    // an extra grant refused in the network: the message goes on on the ones it has
    if (m.grants.size > 0) return;
    this.clock.cancel(m.answer);
    m.answer = null;
    m.why = x.w ?? 0;
    m.whySwitch = typeof x.n === 'number' ? x.n : -1;
    this.rejected(m);
  }

  /**
   * A switch gave an extra grant's virtual link to a new message: the grant sends no more, and a
   * reject along its whole path frees what the switches between here and there still hold. Were it
   * the message's last grant (its base refused after the extra came), the message asks again for the
   * segments no grant has sent (nothing was lost: the receiver keeps what came).
   */
  private onSwitchRevoke(x: HarmonyControl): void {
    const g = this.sendGrants.get(x.g);
    if (g === undefined) return;
    const m = g.msg;
    if (g.closed) {
      // already complete: its complete may reach the receiver after the switch's reject closed the
      // grant there, and then none comes back; the message's verdict comes with its other grants'
      this.clock.cancel(g.back);
      g.back = null;
      this.sendGrants.delete(g.key);
      m.grants.delete(g);
    } else this.revokeSend(g);
    if (m.ended || m.grants.size > 0) return;
    this.clock.cancel(m.answer);
    if (m.next < m.nSeg) {
      this.s.retried++;
      this.ask(m, false);
    } else {
      // every byte sent: the receiver says done when the last one comes; silence is a failure
      m.answer = this.clock.after(3 * this.cfg.oneWayNs, this.noAnswer, m, m.attempt);
    }
  }

  onFailure(f: Frame, x: HarmonyControl): void {
    const m = this.out.get(f.f);
    if (m === undefined || m.ended || m.attempt !== x.a) return;
    this.fail(m, x.w ?? FailureWhy.Silent);
  }

  /**
   * Harmony could not admit the message. rejectAfter window: inside its admission window it asks again
   * at once (or when a send slot frees, §3.2 "retransmitting data using a new request"); the reject
   * is final once the window has closed unstarted. Otherwise (and for a message that had started: a
   * failure's re-ask) the retries count.
   */
  private rejected(m: OutMsg): void {
    if (m.deadline >= 0 && m.framesSent === 0) {
      if (this.clock.now() < m.deadline) {
        this.s.retried++;
        this.askWhenFree(m, true);
        return;
      }
    } else if (this.retry(m)) return;
    this.s.rejected++;
    this.giveUp(m, Outcome.Rejected);
  }

  /** a failure of the current attempt: its grants are given back along their paths, then as `rejected` */
  private fail(m: OutMsg, why: number): void {
    this.inferred(m.spec.id, why, -1);
    for (const g of m.grants) {
      this.sendGrants.delete(g.key);
      this.clock.cancel(g.back);
      g.back = null;
      if (!g.closed)
        this.alongPath(m.spec.dst, m.spec.id, g.hops, {
          h: Ctl.Reject,
          g: g.key,
          a: m.attempt,
          hops: g.hops,
          w: RejectWhy.Aborted,
        });
      this.freeSendSlot(g);
    }
    m.grants.clear();
    this.clock.cancel(m.answer);
    m.answer = null;
    m.why = 0;
    m.whySwitch = -1;
    if (this.retry(m)) return;
    this.s.failed++;
    this.giveUp(m, Outcome.Failed);
  }

  /** asks again (now, or when a send slot frees) while the message has retries left */
  private retry(m: OutMsg): boolean {
    if (m.attempt > this.cfg.retries) return false;
    this.s.retried++;
    this.askWhenFree(m, false);
    return true;
  }

  /** asks now with a send slot free, else when one frees (inside its window: until the window closes) */
  private askWhenFree(m: OutMsg, windowed: boolean): void {
    if (this.sendUsed < this.cfg.K) {
      this.ask(m);
      return;
    }
    if (m.waiting) return;
    m.waiting = true;
    this.waitingSlot.push(m);
    if (windowed) m.slotTimer = this.clock.after(m.deadline - this.clock.now(), this.slotWaitOver, m);
  }

  /** the window closed while the message waited for a send slot: rejected, the sender had none */
  private readonly slotWaitOver = (_now: number, msg: unknown): void => {
    const m = msg as OutMsg;
    m.slotTimer = null;
    if (!m.waiting || m.ended) return;
    m.waiting = false;
    this.waitingSlot.splice(this.waitingSlot.indexOf(m), 1);
    m.why = RejectWhy.SenderBusy;
    m.whySwitch = -1;
    this.s.rejected++;
    this.giveUp(m, Outcome.Rejected);
  };

  private giveUp(m: OutMsg, outcome: number): void {
    if (this.cfg.onReject === 'give-up') {
      this.end(m, outcome);
      return;
    }
    this.s.bestEffort++;
    this.end(m, Outcome.BestEffort);
    this.bestEffort.startFlow(m.spec, this.clock.now());
  }

  private end(m: OutMsg, outcome: number): void {
    m.ended = true;
    if (outcome === Outcome.Complete) this.s.completed++;
    const rejected = outcome === Outcome.Rejected || outcome === Outcome.BestEffort;
    this.s.outcomes.push([
      m.spec.id,
      outcome,
      m.attempt,
      this.c.physNow(),
      m.switches,
      rejected ? m.why : 0,
      rejected ? m.whySwitch : -1,
    ]);
  }
}
