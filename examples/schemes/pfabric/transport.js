/**
 * pFabric's host transport (§4.2 of the paper): minimal rate control under priority scheduling.
 * - Every data packet carries its flow's priority, the remaining flow size (bytes not yet
 *   acknowledged when it leaves), with the flow size so the receiver knows its end: `x: [remaining, size]`.
 * - A flow starts at line rate: its window is the fabric's bandwidth-delay product (`initialWindow`).
 * - The receiver acknowledges every packet (selective acks); each new ack grows the window as TCP does
 *   (one packet per ack below ssthresh, 1/cwnd above).
 * - No fast retransmit: a loss is found only by the fixed, small retransmission timeout (`rto`). On a
 *   timeout the flow re-enters slow start (ssthresh = half the window, window 1) and resends what is
 *   unacknowledged, lowest first.
 * - After `probeAfter` consecutive timeouts the flow enters probe mode: every rto it sends only a
 *   minimum-size probe (a one-byte payload), and on the probe's ack it leaves probe mode in slow start.
 */
import { FrameType, makeFrame, Priority, segmentBytes, segmentCount, WireSize } from 'dcemu/scheme/node';

/** a probe: a data packet with a one-byte payload, sequence -1 */
const PROBE = -1;

class Sender {
  constructor(spec, cfg) {
    this.spec = spec;
    this.n = segmentCount(spec.size);
    this.acked = new Uint8Array(this.n);
    this.nAcked = 0;
    this.ackedBytes = 0;
    /** sent since the last timeout and not acknowledged yet */
    this.out = new Uint8Array(this.n);
    this.inflight = 0;
    this.cursor = 0;
    /** ever sent (a later send is a retransmission) */
    this.sent = new Uint8Array(this.n);
    this.cwnd = cfg.initialWindow;
    this.ssthresh = Number.POSITIVE_INFINITY;
    this.timer = null;
    this.consecutive = 0;
    this.probing = false;
    this.done = false;
    // SenderStats
    this.retransmits = 0;
    this.timeouts = 0;
    this.framesSent = 0;
  }

  /**
   * the lowest segment neither acknowledged nor outstanding, or -1: every segment below `cursor` is
   * one or the other (a timeout, which clears `out`, puts the cursor back to 0)
   */
  nextSegment() {
    while (this.cursor < this.n && (this.acked[this.cursor] === 1 || this.out[this.cursor] === 1))
      this.cursor++;
    return this.cursor < this.n ? this.cursor : -1;
  }
}

class Receiver {
  constructor(n) {
    this.got = new Uint8Array(n);
    this.count = 0;
    this.delivered = false;
    this.via = [];
    this.lastNew = -1;
  }
}

export class PFabricTransport {
  /** `nicStats`: what the host's NIC pushed out, reported with the transport's counters */
  constructor(cfg, components, nicStats = {}) {
    this.cfg = cfg;
    this.c = components;
    this.nicStats = nicStats;
    this.senders = new Map();
    this.receivers = new Map();
    this.stats = { timeouts: 0, retransmits: 0, probeEntries: 0, probes: 0 };
  }

  startFlow(spec, now) {
    const fl = new Sender(spec, this.cfg);
    this.senders.set(spec.id, fl);
    this.fill(fl, now);
  }

  senderStats(id) {
    return this.senders.get(id);
  }

  partialPaths() {
    const out = [];
    for (const [id, r] of this.receivers)
      if (!r.delivered && r.count > 0) out.push([id, r.via.slice(), r.lastNew]);
    return out;
  }

  report() {
    return { ...this.stats, ...this.nicStats };
  }

  stop() {
    for (const fl of this.senders.values()) this.disarm(fl);
  }

  onFrame(f, now) {
    if (f.t === FrameType.Data) this.onData(f, now);
    else if (f.t === FrameType.Ack) this.onAck(f, now);
  }

  // ---- receiver ----

  onData(f, now) {
    // every packet, a probe too, is acknowledged at once, at the highest priority
    this.c.nic.send(
      makeFrame({
        t: FrameType.Ack,
        s: this.c.hostId,
        d: f.s,
        f: f.f,
        q: f.q,
        z: WireSize.Small,
        p: Priority.Ack,
      }),
    );
    if (f.q === PROBE || !Array.isArray(f.x)) return;
    let r = this.receivers.get(f.f);
    if (r === undefined) {
      r = new Receiver(segmentCount(f.x[1]));
      this.receivers.set(f.f, r);
    }
    if (f.v !== 0 && !r.via.includes(f.v)) r.via.push(f.v);
    if (f.q < 0 || f.q >= r.got.length || r.got[f.q] === 1) return;
    r.got[f.q] = 1;
    r.count++;
    r.lastNew = this.c.physNow();
    if (!r.delivered && r.count === r.got.length) {
      r.delivered = true;
      this.c.delivered(f.f, now, r.via);
    }
  }

  // ---- sender ----

  onAck(f, now) {
    const fl = this.senders.get(f.f);
    if (fl === undefined || fl.done) return;
    if (f.q === PROBE) {
      if (!fl.probing) return;
      // the path delivers again: slow start from one packet
      fl.probing = false;
      fl.consecutive = 0;
      fl.cwnd = 1;
      this.disarm(fl);
      this.fill(fl, now);
      return;
    }
    if (f.q < 0 || f.q >= fl.n || fl.acked[f.q] === 1) return;
    fl.acked[f.q] = 1;
    fl.nAcked++;
    fl.ackedBytes += Math.max(0, segmentBytes(fl.spec.size, f.q) - WireSize.Header);
    if (fl.out[f.q] === 1) {
      fl.out[f.q] = 0;
      fl.inflight--;
    }
    fl.consecutive = 0;
    fl.cwnd += fl.cwnd < fl.ssthresh ? 1 : 1 / fl.cwnd;
    if (fl.nAcked === fl.n) {
      fl.done = true;
      this.disarm(fl);
      this.c.acked(fl.spec.id, now);
      return;
    }
    if (fl.probing) return;
    // a new ack restarts the timer for what is still outstanding
    this.disarm(fl);
    this.fill(fl, now);
  }

  /** sends while the window has room, lowest unsent segment first, and keeps the timer running */
  fill(fl, now) {
    while (fl.inflight < Math.floor(fl.cwnd)) {
      const seq = fl.nextSegment();
      if (seq < 0) break;
      this.sendSegment(fl, seq);
    }
    if (fl.timer === null && fl.inflight > 0) this.arm(fl, now);
  }

  sendSegment(fl, seq) {
    if (fl.sent[seq] === 1) {
      fl.retransmits++;
      this.stats.retransmits++;
    }
    fl.sent[seq] = 1;
    fl.out[seq] = 1;
    fl.inflight++;
    fl.framesSent++;
    this.sendData(fl, seq, segmentBytes(fl.spec.size, seq));
  }

  /** a data packet (or a probe) of `fl`, carrying its priority: the bytes not yet acknowledged */
  sendData(fl, seq, z) {
    this.c.nic.send(
      makeFrame({
        t: FrameType.Data,
        s: this.c.hostId,
        d: fl.spec.dst,
        f: fl.spec.id,
        q: seq,
        z,
        p: Priority.BestEffort,
        x: [fl.spec.size - fl.ackedBytes, fl.spec.size],
      }),
    );
  }

  arm(fl, now) {
    fl.timer = this.c.clock.at(now + this.cfg.rtoNs, (t) => this.onTimeout(fl, t));
  }

  disarm(fl) {
    if (fl.timer !== null) this.c.clock.cancel(fl.timer);
    fl.timer = null;
  }

  onTimeout(fl, now) {
    fl.timer = null;
    if (fl.done) return;
    fl.timeouts++;
    this.stats.timeouts++;
    fl.consecutive++;
    // whatever was outstanding is presumed lost: it goes again, lowest first, from a window of one
    fl.out.fill(0);
    fl.inflight = 0;
    fl.cursor = 0;
    fl.ssthresh = Math.max(2, fl.cwnd / 2);
    fl.cwnd = 1;
    if (fl.consecutive >= this.cfg.probeAfter) {
      if (!fl.probing) this.stats.probeEntries++;
      fl.probing = true;
      this.stats.probes++;
      this.sendData(fl, PROBE, 1 + WireSize.Header);
      this.arm(fl, now);
      return;
    }
    this.fill(fl, now);
  }
}
