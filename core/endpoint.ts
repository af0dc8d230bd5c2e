/**
 * The UDP endpoint of a process: one socket for all its ports, and one reliable-or-loud link protocol
 * per port below the frames. Frames committed on a port are batched per next hop and flushed once the
 * current burst of events is done, so frames that leave together share a datagram. Every datagram
 * carries a link header (core/codec.ts): a sequence number (a gap ends the run naming the link: never
 * silently wrong results), an acknowledgement for flow control (a sender keeps at most `WINDOW`
 * datagrams unacknowledged and holds the rest, so running ahead cannot overflow the receiver's socket
 * buffer), and, in conservative mode, the sender's promise for the link (core/sync.ts).
 *
 * Nothing forged is accepted: a datagram must carry the run's tag and come from the socket of its
 * port's peer; frames whose stamps break the link's physics (before the peer's last promise, or beyond
 * any frame it could have committed) or whose fields make no sense are counted and dropped, and a
 * frame that makes a protocol throw is counted too, never a crash.
 */
import dgram from 'node:dgram';
import { networkInterfaces } from 'node:os';
import { Codec, type DecodeResult, MAX_DATAGRAM } from './codec.js';
import { type Frame, FrameType } from './frame.js';
import { ipv4 } from './ipv4.js';
import { portLane, type Scheduler } from './scheduler.js';

export interface PeerAddress {
  /** IP address of the peer process's socket */
  host: string;
  port: number;
  /** the peer's port index this link lands on */
  peerPort: number;
  /**
   * conservative mode: the peer's keepalives that arrive within this long of the frame before them
   * on the link only observe (`Endpoint.quietKeepalive` on its side), so no answer to them can come;
   * 0 or absent: any frame may be answered
   */
  quietDetectNs?: number;
}

/**
 * Whether a frame arriving at `at` finds its link up on a detector that takes it down only after
 * `detectNs` of silence, given the latest arrival before it on that link (`last`). Both ends of a link
 * apply this one test to the same frames (the receiver's `LivenessDetector.staysUp` in
 * core/liveness.ts, the sender's `Endpoint.send`), so they agree on which keepalives are quiet.
 */
export function arrivesUp(at: number, last: number, detectNs: number): boolean {
  return at >= last && at < last + detectNs;
}

export interface EndpointStats {
  datagramsOut: number;
  datagramsIn: number;
  framesOut: number;
  framesIn: number;
  malformed: number;
  corrupted: number;
  sendErrors: number;
  /** datagrams from an address that is not the port's peer, frames whose stamps break the link's physics */
  forged: number;
  /** datagrams of another run: their tag is not this run's (core/auth.ts) */
  foreign: number;
  /** datagrams seen twice (a sequence number already received) */
  duplicates: number;
  /** frames whose handler threw (fields a protocol could not make sense of) */
  rejected: number;
  /** datagrams held back because the peer's window was full */
  held: number;
  /** datagrams that carried no frame (null messages, pure acknowledgements) */
  nullOut: number;
  /** dilated mode: sequence gaps (datagrams lost between processes) */
  gaps: number;
  /**
   * conservative mode: datagrams still arriving from a peer that died unplanned, and frames this side
   * had for it (dropped: the link ended at the peer's last promise)
   */
  fromGone: number;
  toGone: number;
}

/** Receives each frame at its handling time: `port` is the local ingress port index. */
export type FrameHandler = (now: number, port: number, frame: Frame) => void;

/** a datagram that decoded */
type Decoded = Extract<DecodeResult, { ok: true }>;

/** What the link protocol reports upward (to core/sync.ts and the node runtime). */
export interface LinkListener {
  /** a datagram on `port` brought promises, acknowledgements or frames (conservative mode) */
  promised(port: number): void;
  /** datagrams went missing on `port`: results can no longer be trusted */
  gap(port: number, expected: number, got: number): void;
}

/** dgram's resolver hook for peers given as IPv4 literals (the only kind the orchestrator hands out) */
function literalAddress(
  address: string,
  _family: unknown,
  callback: (err: null, address: string, family: number) => void,
): void {
  callback(null, address, 4);
}

const WINDOW_DEFAULT = 128;
/** datagrams kept while the peers are not known yet (more is a flood, not a neighbour) */
const EARLY_MAX = 4 * WINDOW_DEFAULT;

/** Frames per datagram: 31-byte records leave ample room; keeps one datagram under MAX_DATAGRAM. */
const MAX_BATCH = 64;
/**
 * Unacknowledged datagrams per link direction. Loopback datagrams cost ~1–2 KB of socket buffer each
 * (truesize), so 128 per peer keeps even a switch with dozens of peers inside a 4 MiB receive buffer.
 */
export const WINDOW = WINDOW_DEFAULT;
/** a receiver acknowledges at the latest after this many datagrams, even with nothing else to send */
const ACK_EVERY = WINDOW / 4;
/**
 * How far beyond its datagram's promise (conservative) or the present (dilated) a frame's stamp may
 * lie, virtual ns: the commit pipeline, the longest serialization and delay faults fit well inside one
 * second; a forged stamp centuries ahead, which would make a node skip its future, does not.
 */
export const STAMP_HORIZON_NS = 1e9;

export interface EndpointOptions {
  /**
   * dilated mode, for a node with a single link (a host): frames on one link arrive in stamp order,
   * so once a frame stamped `a` is in, every event up to `a` can run at once.
   */
  eager?: boolean;
  listener?: LinkListener;
  /** the run's datagram tag (core/auth.ts): sent on every datagram, required on every one received */
  tag?: number;
}

export class Endpoint {
  readonly stats: EndpointStats = {
    datagramsOut: 0,
    datagramsIn: 0,
    framesOut: 0,
    framesIn: 0,
    malformed: 0,
    corrupted: 0,
    sendErrors: 0,
    forged: 0,
    foreign: 0,
    duplicates: 0,
    rejected: 0,
    held: 0,
    nullOut: 0,
    gaps: 0,
    fromGone: 0,
    toGone: 0,
  };
  /** the promise each port's next datagram carries (set by the synchronization before a flush) */
  readonly promises: Float64Array;
  /**
   * the conditional promise each port's next datagram carries: valid only with the acknowledgement it
   * was computed for (`setConds`); -Infinity: none
   */
  readonly conds: Float64Array;
  /** what this node waits to pass (a single-link node: its next event or grant), or -1: any progress */
  need = -1;
  /**
   * The earliest arrival over `port` of a frame sent at `t` (EgressPort.earliestArrival; set by the
   * synchronization, which knows the ports)
   */
  hop: (port: number, t: number) => number = (_port, t) => t;
  /** the latest promise received from each port's peer: nothing arrives on it before this */
  readonly inClock: Float64Array;
  /**
   * the peer's latest conditional promise: nothing arrives before it either, except what this node's
   * frames the peer had not acknowledged then (`unackedArrival`) make it answer
   */
  readonly inCond: Float64Array;
  /** the peer's latest need: a null message that cannot take it past this is not sent */
  readonly inNeed: Float64Array;
  private readonly codec = new Codec();
  private socket: dgram.Socket | null = null;
  private peers: Array<PeerAddress | null> = [];
  private readonly batches: Frame[][] = [];
  private dirty: number[] = [];
  /** per port, whether it is in `dirty` */
  private readonly isDirty: Uint8Array;
  private flushQueued = false;
  private handler: FrameHandler = () => {};
  private readonly eager: boolean;
  private readonly listener: LinkListener | null;
  private readonly conservative: boolean;
  // link protocol state, per port
  private readonly txSeq: number[];
  private readonly rxSeq: number[];
  private readonly peerAck: number[];
  private readonly rxUnacked: number[];
  private readonly frameSeq: number[];
  /** per port, the latest arrival of a frame scheduled so far (-Infinity: none yet) */
  private readonly lastArrival: Float64Array;
  /** per port, the latest arrival of a frame sent that the peer will schedule (-Infinity: none yet) */
  private readonly lastSent: Float64Array;
  /** keepalives sent that the peer's side runs as quiet arrivals: no answer to them can come */
  private readonly unanswerable = new WeakSet<Frame>();
  /**
   * Conservative mode: whether a keepalive arriving on `port` at `at` only observes (its arrival finds
   * the link up, so nothing is sent), given the latest arrival scheduled on that port before it
   * (`last`); such arrivals are quiet events (`Scheduler.atQuiet`). Null: every frame may send.
   */
  quietKeepalive: ((port: number, at: number, last: number) => boolean) | null = null;
  /**
   * Frames whose frame check failed, at their arrival (a detector that counts bit transitions hears
   * them: core/liveness.ts `garbled`). Null: they are counted and dropped on receipt, never scheduled.
   */
  onGarbled: ((port: number) => void) | null = null;
  private readonly sentPromise: Float64Array;
  private readonly sentCond: Float64Array;
  private readonly sentNeed: Float64Array;
  /** the reverse direction's sequence number `conds` were computed for (-1: none valid) */
  private readonly condSeq: number[];
  /**
   * the earliest arrival among the frames received from the peer since the last datagram sent to it
   * (+Infinity: none): until acknowledged, they hold the peer's bound on this side below it + lookahead
   */
  private readonly rxUnackedMin: Float64Array;
  /** per port, datagrams with frames the peer has not acknowledged: sequence, earliest arrival */
  private readonly pending: UnackedArrivals[];
  /** per port, the earliest arrival among the frames queued for the next flush */
  private readonly batchMin: Float64Array;
  private readonly outbox: Buffer[][];
  /** conservative mode: ports whose peer died unplanned (`peerGone`) */
  private readonly gone: boolean[];
  private readonly wantsAck: boolean[];

  constructor(
    private readonly sched: Scheduler,
    private readonly portCount: number,
    opts: EndpointOptions = {},
  ) {
    this.eager = opts.eager ?? false;
    this.tag = opts.tag ?? 0;
    this.listener = opts.listener ?? null;
    this.conservative = sched.conservative;
    for (let i = 0; i < portCount; i++) this.batches.push([]);
    this.txSeq = new Array(portCount).fill(0);
    this.rxSeq = new Array(portCount).fill(0);
    this.peerAck = new Array(portCount).fill(0);
    this.rxUnacked = new Array(portCount).fill(0);
    this.frameSeq = new Array(portCount).fill(0);
    this.lastArrival = new Float64Array(portCount).fill(Number.NEGATIVE_INFINITY);
    this.lastSent = new Float64Array(portCount).fill(Number.NEGATIVE_INFINITY);
    this.promises = new Float64Array(portCount);
    this.conds = new Float64Array(portCount).fill(Number.NEGATIVE_INFINITY);
    this.inClock = new Float64Array(portCount);
    this.inCond = new Float64Array(portCount).fill(Number.NEGATIVE_INFINITY);
    this.inNeed = new Float64Array(portCount).fill(-1);
    this.isDirty = new Uint8Array(portCount);
    this.sentPromise = new Float64Array(portCount);
    this.sentCond = new Float64Array(portCount).fill(Number.NEGATIVE_INFINITY);
    this.sentNeed = new Float64Array(portCount).fill(-1);
    this.condSeq = new Array(portCount).fill(-1);
    this.rxUnackedMin = new Float64Array(portCount).fill(Number.POSITIVE_INFINITY);
    this.pending = Array.from({ length: portCount }, () => new UnackedArrivals());
    this.batchMin = new Float64Array(portCount).fill(Number.POSITIVE_INFINITY);
    this.outbox = Array.from({ length: portCount }, () => []);
    this.wantsAck = new Array(portCount).fill(false);
    this.gone = new Array(portCount).fill(false);
  }

  onFrame(handler: FrameHandler): void {
    this.handler = handler;
  }

  /** Binds the socket; returns the address and port it bound (`host` may be a subnet: see `bindAddress`). */
  async bind(host: string, port = 0): Promise<{ address: string; port: number }> {
    host = bindAddress(host);
    const socket = dgram.createSocket({
      type: 'udp4',
      recvBufferSize: 4 << 20,
      sendBufferSize: 4 << 20,
      // peers are IP literals: no resolver round (a process.nextTick per datagram) before each send
      lookup: literalAddress,
    });
    this.socket = socket;
    socket.on('message', (buf, rinfo) => {
      if (this.peers.length === 0) {
        // only the run's own datagrams are kept: a stranger's flood cannot crowd out a neighbour's
        const r = this.codec.decode(buf);
        if (r.ok && r.tag !== this.tag) this.stats.foreign++;
        else if (this.early.length < EARLY_MAX)
          this.early.push([buf, { address: rinfo.address, port: rinfo.port }]);
        else this.stats.forged++;
        return;
      }
      this.receive(buf, rinfo);
    });
    socket.on('error', () => {
      this.stats.sendErrors++;
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    const bound = socket.address();
    return { address: bound.address, port: bound.port };
  }

  setPeers(peers: Array<PeerAddress | null>): void {
    this.peers = peers;
    const early = this.early.splice(0);
    for (const [buf, from] of early) this.receive(buf, from);
  }

  /**
   * The peer on `port` is a new process (conservative mode: a container started again): a new link
   * session from sequence 1 both ways; datagrams held for the old process are dropped (a stopped box
   * loses what was sent to it), and the next flush tells the new one this side's promise.
   */
  relink(port: number): void {
    this.txSeq[port] = 0;
    this.rxSeq[port] = 0;
    this.peerAck[port] = 0;
    this.rxUnacked[port] = 0;
    this.sentPromise[port] = 0;
    this.sentCond[port] = Number.NEGATIVE_INFINITY;
    this.sentNeed[port] = -1;
    this.condSeq[port] = -1;
    this.inCond[port] = Number.NEGATIVE_INFINITY;
    this.inNeed[port] = -1;
    this.rxUnackedMin[port] = Number.POSITIVE_INFINITY;
    this.pending[port].clear();
    this.wantsAck[port] = false;
    this.outbox[port].length = 0;
    // keepalives held for the old process's next datagram (`send`) are lost with it, as a stopped box
    // loses what was sent to it (only they wait in a batch between steps)
    this.batches[port].length = 0;
    this.batchMin[port] = Number.POSITIVE_INFINITY;
    // the new process has seen no frame, nor sent one: both sides judge quiet keepalives afresh
    this.lastArrival[port] = Number.NEGATIVE_INFINITY;
    this.lastSent[port] = Number.NEGATIVE_INFINITY;
    this.wakeDrained();
  }

  /**
   * Conservative mode: the peer on `port` died unplanned. Its last promise is where the link ends: the
   * input clock goes to "never", nothing of this side's waits on its acknowledgements any more, and a
   * datagram of it still on its way is dropped (counted in `fromGone`), never handled late. Returns
   * that last promise.
   */
  peerGone(port: number): number {
    const last = this.inClock[port];
    this.gone[port] = true;
    this.inClock[port] = Number.POSITIVE_INFINITY;
    this.inCond[port] = Number.POSITIVE_INFINITY;
    this.inNeed[port] = -1;
    this.rxUnackedMin[port] = Number.POSITIVE_INFINITY;
    this.pending[port].clear();
    this.outbox[port].length = 0;
    this.wantsAck[port] = false;
    this.wakeDrained();
    this.listener?.promised(port);
    return last;
  }

  /**
   * The synchronization has set `conds` from everything received so far: each is valid with the
   * acknowledgement the port's datagrams now carry (a datagram received later makes it stale).
   */
  setConds(): void {
    for (let p = 0; p < this.portCount; p++) this.condSeq[p] = this.rxSeq[p];
  }

  /**
   * The earliest arrival at the peer of any frame on `port` that the peer had not acknowledged when
   * it computed its conditional promise (+Infinity: none).
   */
  unackedArrival(port: number): number {
    return Math.min(this.pending[port].earliest(), this.batchMin[port]);
  }

  /** datagrams that came before the peers were known (a neighbour told them first): checked once they are */
  private readonly early: Array<[Buffer, { address: string; port: number }]> = [];

  /** the port's batch goes out at the next flush */
  private markDirty(port: number): void {
    if (this.isDirty[port] === 0) {
      this.isDirty[port] = 1;
      this.dirty.push(port);
    }
  }

  /**
   * Queues a committed frame for the peer of `port`; sent with the others of this burst. A keepalive
   * that a peer with a need (a host) runs quietly is held until the next datagram to it (below).
   */
  send(port: number, frame: Frame): void {
    this.batches[port].push(frame);
    if (this.conservative && frame.c === 0) {
      // the frames the peer will schedule, in its order: a keepalive it runs as a quiet arrival (the
      // same test on both sides, `quietKeepalive`) cannot be answered, so it does not hold this side's
      // bound on the peer
      const last = this.lastSent[port];
      if (frame.a > last) this.lastSent[port] = frame.a;
      const quiet = this.peers[port]?.quietDetectNs ?? 0;
      if (quiet > 0 && frame.t === FrameType.Keepalive && arrivesUp(frame.a, last, quiet)) {
        this.unanswerable.add(frame);
        // Nor need it travel on its own to a peer that said its need: that peer handles it only once
        // a promise past its arrival reaches it, and every datagram to the peer carries the whole
        // batch, so it rides on the first one the peer needs (a host's keepalives from its leaf then
        // cost it no wakeup of their own). A promise is never past a frame held back: the port's
        // promises lie past its committed departures. A peer that promised "never" (killed) needs
        // nothing again: its keepalives go as before, to nobody, rather than pile up here.
        if (this.inNeed[port] < 0 || this.inClock[port] === Number.POSITIVE_INFINITY) this.markDirty(port);
        return;
      }
    }
    this.markDirty(port);
    if (frame.a < this.batchMin[port]) this.batchMin[port] = frame.a;
    if (!this.conservative && !this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flush);
    }
  }

  /**
   * Sends every port's batch; a port with nothing to send still sends a header (a null message) when
   * it owes its peer an acknowledgement, or when its promises rose and the peer can use them: a peer
   * that said what it waits for (`need`) and already has promises past it is not sent more. Conservative
   * mode calls it once per step; `all` sends every risen promise (before the process stops or halts).
   */
  readonly flush = (all = false): void => {
    this.flushQueued = false;
    for (const port of this.dirty) {
      this.isDirty[port] = 0;
      this.flushPort(port);
    }
    this.dirty.length = 0;
    for (let port = 0; port < this.portCount; port++) {
      const need = this.inNeed[port];
      // the peer's frames hold its bound on this side below their arrival + lookahead until they are
      // acknowledged: a peer that said its need hears once they hold it below that
      const answer = this.hop(port, this.rxUnackedMin[port]);
      if (
        this.wantsAck[port] ||
        // a peer that heard this node's need hears when it moves, or it would stop sending promises
        this.need !== this.sentNeed[port] ||
        (answer < Number.POSITIVE_INFINITY && (need < 0 || answer <= need))
      ) {
        this.flushPort(port);
        continue;
      }
      const cond = this.condFor(port);
      // a node with a need (a single-link node) sends its conditional promise, not its promise: its
      // promise follows its peer's own promises, which the peer's bound on it already allows for while
      // it runs; before its process stops (a pause), its promise over the pause goes too, since it
      // cannot acknowledge what arrives meanwhile
      const rose =
        cond > this.sentCond[port] ||
        ((this.need < 0 || all) && this.promises[port] > this.sentPromise[port]);
      if (!rose) continue;
      // a peer with a need is sent the first promise that takes it past its need, not the ones before
      if (
        all ||
        need < 0 ||
        (Math.max(this.promises[port], cond) > need &&
          Math.max(this.sentPromise[port], this.sentCond[port]) <= need)
      ) {
        this.flushPort(port);
      }
    }
  };

  /** the conditional promise a datagram on `port` may carry now */
  private condFor(port: number): number {
    return this.condSeq[port] === this.rxSeq[port] ? this.conds[port] : Number.NEGATIVE_INFINITY;
  }

  private flushPort(port: number): void {
    const b = this.batches[port];
    if (this.gone[port]) {
      this.stats.toGone += b.length;
      b.length = 0;
      this.batchMin[port] = Number.POSITIVE_INFINITY;
      return;
    }
    const peer = this.peers[port];
    if (peer && this.socket) {
      const promise = this.promises[port];
      const cond = this.condFor(port);
      const old = this.sentPromise[port];
      const none = Number.NEGATIVE_INFINITY;
      let i = 0;
      // one datagram per MAX_BATCH frames; only the last carries the new promises (the earlier ones'
      // frames may lie before them)
      do {
        const chunk = b.length - i > MAX_BATCH ? b.slice(i, i + MAX_BATCH) : i === 0 ? b : b.slice(i);
        i += chunk.length;
        const last = i >= b.length;
        let buf = this.encode(port, peer, chunk, last ? promise : old, last ? cond : none);
        if (buf.length > MAX_DATAGRAM) {
          // large scheme headers: one frame per datagram
          this.txSeq[port]--;
          for (let j = 0; j < chunk.length; j++) {
            const end = last && j === chunk.length - 1;
            buf = this.encode(port, peer, [chunk[j]], end ? promise : old, end ? cond : none);
            this.transmit(port, buf, [chunk[j]]);
          }
        } else {
          this.transmit(port, buf, chunk);
        }
      } while (i < b.length);
      if (promise > this.sentPromise[port]) this.sentPromise[port] = promise;
      this.sentCond[port] = cond;
      this.sentNeed[port] = this.need;
      this.rxUnackedMin[port] = Number.POSITIVE_INFINITY;
    }
    b.length = 0;
    this.batchMin[port] = Number.POSITIVE_INFINITY;
  }

  private readonly tag: number;

  private encode(
    port: number,
    peer: PeerAddress,
    frames: readonly Frame[],
    promise: number,
    cond: number,
  ): Buffer {
    this.rxUnacked[port] = 0;
    this.wantsAck[port] = false;
    if (frames.length === 0) this.stats.nullOut++;
    return this.codec.encode(
      {
        tag: this.tag,
        port: peer.peerPort,
        seq: ++this.txSeq[port],
        ack: this.rxSeq[port],
        promise,
        cond,
        need: this.need,
      },
      frames,
    );
  }

  /** Sends now if the peer's window has room, else holds the datagram until it acknowledges more. */
  private transmit(port: number, buf: Buffer, frames: readonly Frame[]): void {
    this.stats.framesOut += frames.length;
    if (this.conservative && frames.length > 0)
      this.pending[port].add(this.txSeq[port], frames, this.unanswerable);
    const box = this.outbox[port];
    if (box.length > 0 || this.txSeq[port] - this.peerAck[port] > WINDOW) {
      box.push(buf);
      this.stats.held++;
      return;
    }
    this.sendBuf(port, buf);
  }

  private sendBuf(port: number, buf: Buffer): void {
    const peer = this.peers[port]!;
    this.stats.datagramsOut++;
    // no callback: the datagram goes to the kernel synchronously when it can (most of the time), and
    // errors (e.g. a peer that is gone) come to the socket's 'error' listener; `sent()` watches the
    // socket's queue instead, as a socket closed right after send() silently drops what it still holds
    this.socket!.send(buf, peer.port, peer.host);
  }

  /** the peer acknowledged up to `ack`: send what the window now admits, oldest first */
  private acked(port: number, ack: number): void {
    if (ack <= this.peerAck[port] || ack > this.txSeq[port]) return;
    this.peerAck[port] = ack;
    const box = this.outbox[port];
    if (box.length === 0) return;
    // held datagrams are numbered after the sent ones: the first held one is txSeq - box.length + 1
    let next = this.txSeq[port] - box.length + 1;
    let n = 0;
    while (n < box.length && next - ack <= WINDOW) {
      this.sendBuf(port, box[n]);
      n++;
      next++;
    }
    if (n > 0) box.splice(0, n);
    this.wakeDrained();
  }

  /** who waits for the datagrams a peer's window holds back to be out (a pause report) */
  private drainedHeld: Array<() => void> = [];

  /** nothing held back for a peer's window */
  private noneHeld(): boolean {
    for (const box of this.outbox) if (box.length > 0) return false;
    return true;
  }

  private wakeDrained(): void {
    if (this.drainedHeld.length > 0 && this.noneHeld()) {
      const d = this.drainedHeld;
      this.drainedHeld = [];
      for (const f of d) f();
    }
  }

  /**
   * Resolves once every datagram handed to the socket has left it; with `held`, also those a peer's
   * window holds back (they leave as the peer acknowledges): a node about to be stopped for a pause
   * must have its last promises out, or its peers wait on it forever.
   */
  async sent(held = false): Promise<void> {
    if (held && !this.noneHeld()) await new Promise<void>((resolve) => this.drainedHeld.push(resolve));
    // datagrams the kernel could not take at once wait in the socket's queue (rare on loopback)
    while (this.socket !== null && this.socket.getSendQueueCount() > 0)
      await new Promise((resolve) => setTimeout(resolve, 1));
  }

  private readonly garbled = (_now: number, port: number): void => {
    this.onGarbled?.(port);
  };

  private readonly deliver = (now: number, port: number, frame: Frame): void => {
    // counted when handled, not when received: a frame still in flight when the run stops is not,
    // so the count is exact whatever the operating system did with the last datagrams
    this.sched.fidelity.framesHandled++;
    try {
      this.handler(now, port, frame);
    } catch {
      // a well-formed frame whose scheme fields a protocol could not use: counted, never a crash
      this.stats.rejected++;
    }
  };

  /**
   * Decodes a datagram and schedules its frames; public so tests can feed raw bytes (without `from`,
   * the sender's address is not checked).
   */
  receive(buf: Buffer, from?: { address: string; port: number }): void {
    this.stats.datagramsIn++;
    const r = this.admit(this.codec.decode(buf), from);
    if (r === null) return;
    const port = r.port;
    this.takeHeader(port, r);
    const latest = this.scheduleFrames(port, r);
    if (this.conservative) {
      if (r.promise > this.inClock[port]) this.inClock[port] = r.promise;
      this.listener?.promised(port);
      return;
    }
    const now = this.sched.now();
    if (this.eager && latest > now) this.sched.runDue(latest);
    else this.sched.arm();
  }

  /**
   * The datagram if it is the next one of its link's session, counted and null if not: malformed,
   * another run's, from a peer that died, from an address not the port's peer, or a duplicate. A gap in
   * the sequence ends a conservative run (the listener) and is counted in dilated mode.
   */
  private admit(r: DecodeResult, from?: { address: string; port: number }): Decoded | null {
    if (!r.ok || r.port >= this.portCount || r.port < 0) {
      this.stats.malformed++;
      return null;
    }
    if (r.tag !== this.tag) {
      // another run's, or a stranger's: never delivered, and before anything else looks at it
      this.stats.foreign++;
      return null;
    }
    const port = r.port;
    if (this.gone[port]) {
      this.stats.fromGone++;
      return null;
    }
    if (from) {
      const peer = this.peers[port];
      if (!peer || peer.port !== from.port || peer.host !== from.address) {
        this.stats.forged++;
        return null;
      }
    }
    if (r.seq === 1 && this.rxSeq[port] > 0 && !this.conservative) {
      // dilated mode: the peer's process was started again (a container `start`): a new session
      this.rxSeq[port] = 0;
      this.peerAck[port] = this.txSeq[port];
      this.outbox[port].length = 0;
    }
    if (r.seq <= this.rxSeq[port]) {
      this.stats.duplicates++;
      return null;
    }
    // a gap ends a conservative run; dilated mode counts it (a disconnected container loses datagrams)
    if (r.seq !== this.rxSeq[port] + 1) {
      if (this.conservative) this.listener?.gap(port, this.rxSeq[port] + 1, r.seq);
      else this.stats.gaps++;
    }
    return r;
  }

  /** The link header of an admitted datagram: its sequence, acknowledgement, conditional promise and need. */
  private takeHeader(port: number, r: Decoded): void {
    this.rxSeq[port] = r.seq;
    this.acked(port, r.ack);
    if (this.conservative) {
      // the conditional promise speaks for everything the peer had received up to its `ack`
      this.pending[port].release(Math.min(r.ack, this.txSeq[port]));
      this.inCond[port] = r.cond;
      this.inNeed[port] = r.need;
    }
    if (++this.rxUnacked[port] >= ACK_EVERY) {
      this.wantsAck[port] = true;
      if (!this.conservative && !this.flushQueued) {
        this.flushQueued = true;
        queueMicrotask(this.flush);
      }
    }
  }

  /**
   * Schedules an admitted datagram's frames at their arrivals, each checked against the times this
   * link's physics allows (after the peer's last promise, not too far ahead); returns the latest.
   */
  private scheduleFrames(port: number, r: Decoded): number {
    const sched = this.sched;
    const fid = sched.fidelity;
    const now = sched.now();
    // the earliest and latest stamps this link's physics allows
    const floor = this.conservative ? this.inClock[port] : Number.NEGATIVE_INFINITY;
    const ceiling =
      (this.conservative ? (Number.isFinite(r.promise) ? r.promise : floor) : now) + STAMP_HORIZON_NS;
    let latest = 0;
    const lane = portLane(port);
    for (const f of r.frames) {
      this.stats.framesIn++;
      if (f.a < floor || f.a > ceiling) {
        this.stats.forged++;
        // from the peer's own address, a frame before its promise means a promise was broken: whatever
        // the cause, the run's results can no longer be trusted, so it counts as a causality miss too
        if (f.a < floor) fid.causalityMisses++;
        continue;
      }
      if (f.c !== 0) {
        // the frame check fails: the wire corrupted it
        this.stats.corrupted++;
        if (this.onGarbled === null) continue;
        // yet its bits arrived, at its time: an arrival like any other, which a detector may act on
        if (this.conservative && f.a < this.rxUnackedMin[port]) this.rxUnackedMin[port] = f.a;
        if (f.a > this.lastArrival[port]) this.lastArrival[port] = f.a;
        sched.atKeyed(f.a, lane + this.frameSeq[port]++, this.garbled, port, f);
        if (f.a > latest) latest = f.a;
        continue;
      }
      if (!this.conservative) fid.arrivalLateness.record(now > f.a ? now - f.a : 0);
      const last = this.lastArrival[port];
      if (f.a > last) this.lastArrival[port] = f.a;
      if (f.t === FrameType.Keepalive && this.quietKeepalive?.(port, f.a, last) === true) {
        sched.atKeyedQuiet(f.a, lane + this.frameSeq[port]++, this.deliver, port, f);
      } else {
        // an arrival this node may answer: until acknowledged it holds the peer's bound on this side
        if (this.conservative && f.a < this.rxUnackedMin[port]) this.rxUnackedMin[port] = f.a;
        sched.atKeyed(f.a, lane + this.frameSeq[port]++, this.deliver, port, f);
      }
      if (f.a > latest) latest = f.a;
    }
    return latest;
  }

  /** Closes the socket at once: nothing held or batched is sent (the node has ended). */
  closeNow(): void {
    const s = this.socket;
    this.socket = null;
    s?.close();
  }

  async close(): Promise<void> {
    this.flush();
    await this.sent();
    const s = this.socket;
    this.socket = null;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

/**
 * The datagrams with frames one port sent that its peer has not acknowledged yet, in sequence order,
 * each with the earliest arrival among its frames. `earliest()` is the minimum over all of them: each
 * entry keeps the minimum of itself and every later one, so the first entry answers.
 */
class UnackedArrivals {
  private seqs: number[] = [];
  private mins: number[] = [];
  private head = 0;

  add(seq: number, frames: readonly Frame[], unanswerable: WeakSet<Frame>): void {
    let min = Number.POSITIVE_INFINITY;
    for (const f of frames) if (f.a < min && !unanswerable.has(f)) min = f.a;
    // arrivals rise along a port, except when a delay fault is lifted: then earlier entries come down
    for (let i = this.mins.length - 1; i >= this.head && this.mins[i] > min; i--) this.mins[i] = min;
    this.seqs.push(seq);
    this.mins.push(min);
  }

  /** the peer acknowledged every datagram up to `ack` */
  release(ack: number): void {
    const seqs = this.seqs;
    while (this.head < seqs.length && seqs[this.head] <= ack) this.head++;
    if (this.head === seqs.length) {
      this.clear();
    } else if (this.head >= 64 && this.head * 2 >= seqs.length) {
      this.seqs = seqs.slice(this.head);
      this.mins = this.mins.slice(this.head);
      this.head = 0;
    }
  }

  earliest(): number {
    return this.head < this.mins.length ? this.mins[this.head] : Number.POSITIVE_INFINITY;
  }

  clear(): void {
    this.seqs.length = 0;
    this.mins.length = 0;
    this.head = 0;
  }
}

/**
 * Where a node binds: an address, or a subnet (`198.19.3.0/24`) when the runtime cannot know the
 * node's address in advance (a swarm task gets its address when it is scheduled): then this
 * machine's interface address inside that subnet.
 */
export function bindAddress(host: string, interfaces = networkInterfaces()): string {
  const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(host);
  if (!m) return host;
  const bits = Number(m[2]);
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  const net = (ipv4(m[1]) & mask) >>> 0;
  for (const addrs of Object.values(interfaces))
    for (const a of addrs ?? [])
      if (a.family === 'IPv4' && (ipv4(a.address) & mask) >>> 0 === net) return a.address;
  throw new Error(`no interface of this machine has an address in ${host}`);
}
