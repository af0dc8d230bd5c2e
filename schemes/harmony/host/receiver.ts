/**
 * Harmony's receiving side on a host (host/transport.ts; NSDI'24 §3.1–§3.2): K receive slots, requests
 * served at once or pending oldest first until δadmission, the grants' watchdogs over the data stream,
 * completes, and extra slots for active messages (multi-slot).
 */
import { type Frame, type Timer, WireSize } from '../../../sdk/node.js';
import { Ctl, FailureWhy, HarmonyClass, type HarmonyControl, type HarmonyData, RejectWhy } from '../wire.js';
import { HarmonyHostPart } from './host-part.js';
import { InMsg, KEY_SPACE, type Pending, RecvGrant } from './state.js';

export class HarmonyReceiver extends HarmonyHostPart {
  readonly in = new Map<number, InMsg>();
  readonly recvGrants = new Map<number, RecvGrant>();
  readonly pending: Pending[] = [];
  private recvUsed = 0;
  private nextKey = 1;
  /** serve() again when a refused extra's pause ends */
  serveTimer: Timer | null = null;

  onRequest(f: Frame, x: HarmonyControl): void {
    let m = this.in.get(f.f);
    if (m === undefined) {
      m = new InMsg(f.f, f.s, typeof x.b === 'number' ? x.b : 1);
      this.in.set(f.f, m);
    }
    if (m.delivered) {
      // asked again for a message that arrived whole (its complete back was lost): it is done
      this.control(f.s, f.f, HarmonyClass.Data, { h: Ctl.CompleteBack, g: 0, a: x.a, done: 1 });
      return;
    }
    m.attempt = x.a;
    m.sawComplete = false;
    m.noExtra = false;
    m.extraAfter = 0;
    m.window = typeof x.r === 'number' && x.r > 0 ? x.r : -1;
    if (this.recvUsed < this.cfg.K) {
      this.grant(m, -1);
      // slots left and nobody waiting: multi-slot gives the new message more
      this.serve();
      return;
    }
    // it waits δadmission, or what is left of its sender's window if less
    const wait = m.window > 0 ? Math.min(m.window, this.cfg.deltaAdmissionNs) : this.cfg.deltaAdmissionNs;
    const timer = this.clock.after(wait, this.admissionTimeout, m);
    this.pending.push({ msg: m, timer });
    this.revokeForPending();
  }

  /**
   * Requests wait and extras hold slots: ask one extra back per waiting request (§3.2: extra slots must
   * not block future requests). The slot frees when the sender's reject comes, after the extra's last
   * byte: the downlink never carries more than K slots.
   */
  private revokeForPending(): void {
    if (!this.cfg.multiSlot) return;
    let revoking = 0;
    let pick: RecvGrant | null = null;
    for (const g of this.recvGrants.values()) {
      if (g.revoking) revoking++;
      else if (g.extra && !g.closed) pick ??= g;
    }
    if (pick === null || this.pending.length <= revoking) return;
    pick.revoking = true;
    this.s.revoked++;
    this.control(pick.msg.src, pick.msg.id, HarmonyClass.Data, {
      h: Ctl.Revoke,
      g: pick.key,
      a: pick.msg.attempt,
    });
    // its reject comes within a round trip; its data may stop before that: no silence is inferred
    this.clock.cancel(pick.watchdog);
    pick.watchdog = this.clock.after(3 * this.cfg.oneWayNs, this.revokeUnanswered, pick);
  }

  /** the sender never gave the extra back (its revoke lost, or the grant ended meanwhile): free the slot */
  private readonly revokeUnanswered = (_now: number, grant: unknown): void => {
    const g = grant as RecvGrant;
    g.watchdog = null;
    if (g.closed) return;
    this.closeGrant(g);
    this.serve();
  };

  private readonly admissionTimeout = (_now: number, msg: unknown): void => {
    const i = this.pending.findIndex((p) => p.msg === msg);
    if (i < 0) return;
    this.pending.splice(i, 1);
    const m = msg as InMsg;
    this.s.rejectedAtHost++;
    this.control(m.src, m.id, HarmonyClass.Second, {
      h: Ctl.Reject,
      g: 0,
      a: m.attempt,
      w: RejectWhy.Admission,
    });
  };

  private grant(m: InMsg, budget: number): void {
    this.recvUsed++;
    const key = this.c.hostId * KEY_SPACE + (this.nextKey++ % KEY_SPACE);
    const g = new RecvGrant(key, m, budget >= 0);
    m.grants.add(g);
    this.recvGrants.set(key, g);
    this.s.rsvpSent++;
    if (budget >= 0) this.s.extraGrants++;
    this.control(m.src, m.id, HarmonyClass.Data, { h: Ctl.Rsvp, g: key, a: m.attempt, b: budget, hops: [] });
    // the rsvp reaches the sender and its first byte comes back within two bounds (one more of slack)
    g.watchdog = this.clock.after(3 * this.cfg.oneWayNs, this.silent, g);
  }

  private readonly silent = (_now: number, grant: unknown): void => {
    const g = grant as RecvGrant;
    g.watchdog = null;
    if (g.closed) return;
    this.inferred(g.msg.id, FailureWhy.Silent, g.due);
    this.closeGrant(g);
    this.control(g.msg.src, g.msg.id, HarmonyClass.Second, {
      h: Ctl.Failure,
      g: g.key,
      a: g.msg.attempt,
      w: FailureWhy.Silent,
    });
    this.serve();
  };

  onData(f: Frame): void {
    const x = f.x as HarmonyData;
    const m = this.in.get(f.f);
    if (m === undefined) return;
    if (typeof x.qd === 'number' && x.qd > m.maxQueueingNs) m.maxQueueingNs = x.qd;
    if (f.q >= 0 && f.q < m.nSeg && m.got[f.q] === 0) {
      m.got[f.q] = 1;
      m.count++;
      m.lastNew = this.c.physNow();
      if (f.v !== 0 && !m.via.includes(f.v)) m.via.push(f.v);
      if (m.count === m.nSeg && !m.delivered) {
        m.delivered = true;
        this.c.delivered(m.id, this.clock.now(), m.via);
        // its grants were closed before its last bytes came (a revoked one's): the sender waits for this
        if (m.grants.size === 0)
          this.control(m.src, m.id, HarmonyClass.Data, { h: Ctl.CompleteBack, g: 0, a: m.attempt, done: 1 });
      }
    }
    const g = this.recvGrants.get(x.g);
    if (g !== undefined && !g.closed && !g.revoking) {
      this.clock.cancel(g.watchdog);
      // the next byte of a slot comes one pacing gap later, give or take the queueing bound
      // the next byte of a slot is due one pacing gap later, give or take the delay jitter bound
      const gap = f.z * this.slotNsPerByte;
      g.due = this.c.physNow() + gap;
      g.watchdog = this.clock.after(gap + this.cfg.jitterNs, this.silent, g);
    }
  }

  onComplete(f: Frame, x: HarmonyControl): void {
    const g = this.recvGrants.get(x.g);
    if (g === undefined || g.closed) return;
    g.msg.sawComplete = true;
    this.closeGrant(g);
    const m = g.msg;
    if (m.grants.size > 0 || m.delivered) {
      this.control(f.s, f.f, HarmonyClass.Data, {
        h: Ctl.CompleteBack,
        g: x.g,
        a: x.a,
        ...(m.delivered && m.grants.size === 0 && { done: 1 as const }),
      });
    } else {
      this.incomplete(m);
    }
    this.serve();
  }

  onReceiverReject(x: HarmonyControl): void {
    const g = this.recvGrants.get(x.g);
    if (g === undefined || g.closed) return;
    // an extra slot refused or taken back: none for this message for a round trip (or they ping-pong);
    // refused for having nothing left to send: none again
    if (g.extra) {
      if (x.w === RejectWhy.Stale) g.msg.noExtra = true;
      else g.msg.extraAfter = this.clock.now() + 2 * this.cfg.oneWayNs;
    }
    this.closeGrant(g);
    const m = g.msg;
    // the last grant of a message whose bytes were all sent closed: tell the sender how it went (a
    // revoked grant's last bytes may still be on the way behind its reject: they tell it when they come)
    if (m.grants.size === 0 && m.sawComplete && x.w !== RejectWhy.Aborted) {
      if (m.delivered)
        this.control(m.src, m.id, HarmonyClass.Data, { h: Ctl.CompleteBack, g: 0, a: m.attempt, done: 1 });
      else if (x.w !== RejectWhy.Revoked) this.incomplete(m);
    }
    this.serve();
  }

  /** every grant closed and bytes are missing: lost on the way, a failure */
  private incomplete(m: InMsg): void {
    this.inferred(m.id, FailureWhy.Incomplete, -1);
    this.control(m.src, m.id, HarmonyClass.Second, {
      h: Ctl.Failure,
      g: 0,
      a: m.attempt,
      w: FailureWhy.Incomplete,
    });
  }

  private closeGrant(g: RecvGrant): void {
    g.closed = true;
    this.clock.cancel(g.watchdog);
    g.watchdog = null;
    g.msg.grants.delete(g);
    this.recvGrants.delete(g.key);
    this.recvUsed--;
  }

  /**
   * A slot is free: the request waiting longest gets it; with none waiting (multi-slot), the active
   * message with the most bytes still to come gets one BDP more, when it has more than its grants carry.
   */
  private serve(): void {
    while (this.recvUsed < this.cfg.K) {
      const p = this.pending.shift();
      if (p !== undefined) {
        this.clock.cancel(p.timer);
        if (p.msg.delivered) continue;
        this.grant(p.msg, -1);
        continue;
      }
      if (!this.cfg.multiSlot) return;
      let best: InMsg | null = null;
      let bestLeft = 0;
      const now = this.clock.now();
      let paused = Number.POSITIVE_INFINITY;
      for (const g of this.recvGrants.values()) {
        const m = g.msg;
        if (m.noExtra || m.delivered || m === best) continue;
        if (m.extraAfter > now) {
          paused = Math.min(paused, m.extraAfter);
          continue;
        }
        const left = (m.nSeg - m.count) * WireSize.Mss - (m.grants.size + 1) * this.cfg.bdpBytes;
        if (left > bestLeft) {
          best = m;
          bestLeft = left;
        }
      }
      if (best === null) {
        // a message paused after a refused extra may take the slot when its pause ends
        if (paused < Number.POSITIVE_INFINITY && this.serveTimer === null)
          this.serveTimer = this.clock.after(paused - now, this.serveAgain);
        return;
      }
      this.grant(best, this.cfg.bdpBytes);
    }
  }

  private readonly serveAgain = (): void => {
    this.serveTimer = null;
    this.serve();
  };
}
