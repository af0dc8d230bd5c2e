/**
 * The UDP endpoint of a process: one socket for all its ports, and one reliable-or-loud link protocol
 * per port below the frames. Frames committed on a port are batched per next hop and flushed once the
 * current burst of events is done, so frames that leave together share a datagram. Every datagram
 * carries a link header (core/codec.ts): a sequence number (a gap ends the run naming the link: never
 * silently wrong results), an acknowledgement for flow control (a sender keeps at most `WINDOW`
 * datagrams unacknowledged and holds the rest, so running ahead cannot overflow the receiver's socket
 * buffer), and, in conservative mode, the sender's promise for the link (core/sync.ts).
 *
 * Nothing forged is accepted: a datagram must come from the socket of its port's peer; frames whose
 * stamps break the link's physics (before the peer's last promise, or beyond any frame it could have
 * committed) or whose fields make no sense are counted and dropped, and a frame that makes a protocol
 * throw is counted too, never a crash.
 */
import dgram from 'node:dgram';
import { Codec, MAX_DATAGRAM } from './codec.js';
import type { Frame } from './frame.js';
import { portLane, type Scheduler } from './scheduler.js';

export interface PeerAddress {
  /** IP address of the peer process's socket */
  host: string;
  port: number;
  /** the peer's port index this link lands on */
  peerPort: number;
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
}

/** Receives each frame at its handling time: `port` is the local ingress port index. */
export type FrameHandler = (now: number, port: number, frame: Frame) => void;

/** What the link protocol reports upward (to core/sync.ts and the node runtime). */
export interface LinkListener {
  /** a datagram on `port` raised the peer's promise (conservative mode) */
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
    duplicates: 0,
    rejected: 0,
    held: 0,
    nullOut: 0,
    gaps: 0,
  };
  /** the promise each port's next datagram carries (set by the synchronization before a flush) */
  readonly promises: Float64Array;
  /** the latest promise received from each port's peer: nothing arrives on it before this */
  readonly inClock: Float64Array;
  private readonly codec = new Codec();
  private socket: dgram.Socket | null = null;
  private peers: Array<PeerAddress | null> = [];
  private readonly batches: Frame[][] = [];
  private dirty: number[] = [];
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
  private readonly sentPromise: Float64Array;
  private readonly outbox: Buffer[][];
  private readonly wantsAck: boolean[];

  constructor(
    private readonly sched: Scheduler,
    private readonly portCount: number,
    opts: EndpointOptions = {},
  ) {
    this.eager = opts.eager ?? false;
    this.listener = opts.listener ?? null;
    this.conservative = sched.conservative;
    for (let i = 0; i < portCount; i++) this.batches.push([]);
    this.txSeq = new Array(portCount).fill(0);
    this.rxSeq = new Array(portCount).fill(0);
    this.peerAck = new Array(portCount).fill(0);
    this.rxUnacked = new Array(portCount).fill(0);
    this.frameSeq = new Array(portCount).fill(0);
    this.promises = new Float64Array(portCount);
    this.inClock = new Float64Array(portCount);
    this.sentPromise = new Float64Array(portCount);
    this.outbox = Array.from({ length: portCount }, () => []);
    this.wantsAck = new Array(portCount).fill(false);
  }

  onFrame(handler: FrameHandler): void {
    this.handler = handler;
  }

  /** Binds the socket; resolves to the bound UDP port. */
  async bind(host: string, port = 0): Promise<number> {
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
        if (this.early.length < EARLY_MAX)
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
    return socket.address().port;
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
    this.wantsAck[port] = false;
    this.outbox[port].length = 0;
    this.wakeDrained();
  }

  /** datagrams that came before the peers were known (a neighbour told them first): checked once they are */
  private readonly early: Array<[Buffer, { address: string; port: number }]> = [];

  /** Queues a committed frame for the peer of `port`; sent with the others of this burst. */
  send(port: number, frame: Frame): void {
    const b = this.batches[port];
    if (b.length === 0) this.dirty.push(port);
    b.push(frame);
    if (!this.conservative && !this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flush);
    }
  }

  /**
   * Sends every port's batch; a port with nothing to send still sends a header when its promise rose
   * (a null message) or it owes its peer an acknowledgement. Conservative mode calls it once per step.
   */
  readonly flush = (): void => {
    this.flushQueued = false;
    for (const port of this.dirty) this.flushPort(port);
    this.dirty.length = 0;
    for (let port = 0; port < this.portCount; port++) {
      if (this.promises[port] > this.sentPromise[port] || this.wantsAck[port]) this.flushPort(port);
    }
  };

  private flushPort(port: number): void {
    const b = this.batches[port];
    const peer = this.peers[port];
    if (peer && this.socket) {
      const promise = this.promises[port];
      let i = 0;
      // one datagram per MAX_BATCH frames; only the last carries the new promise (the earlier ones'
      // frames may lie before it)
      do {
        const chunk = b.length - i > MAX_BATCH ? b.slice(i, i + MAX_BATCH) : i === 0 ? b : b.slice(i);
        i += chunk.length;
        const last = i >= b.length;
        let buf = this.encode(port, peer, chunk, last ? promise : this.sentPromise[port]);
        if (buf.length > MAX_DATAGRAM) {
          // large scheme headers: one frame per datagram
          this.txSeq[port]--;
          for (let j = 0; j < chunk.length; j++) {
            const p = last && j === chunk.length - 1 ? promise : this.sentPromise[port];
            buf = this.encode(port, peer, [chunk[j]], p);
            this.transmit(port, buf, 1);
          }
        } else {
          this.transmit(port, buf, chunk.length);
        }
      } while (i < b.length);
      if (promise > this.sentPromise[port]) this.sentPromise[port] = promise;
    }
    b.length = 0;
  }

  private encode(port: number, peer: PeerAddress, frames: readonly Frame[], promise: number): Buffer {
    this.rxUnacked[port] = 0;
    this.wantsAck[port] = false;
    if (frames.length === 0) this.stats.nullOut++;
    return this.codec.encode(
      { port: peer.peerPort, seq: ++this.txSeq[port], ack: this.rxSeq[port], promise },
      frames,
    );
  }

  /** Sends now if the peer's window has room, else holds the datagram until it acknowledges more. */
  private transmit(port: number, buf: Buffer, frames: number): void {
    this.stats.framesOut += frames;
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
    const r = this.codec.decode(buf);
    if (!r.ok || r.port >= this.portCount || r.port < 0) {
      this.stats.malformed++;
      return;
    }
    const port = r.port;
    if (from) {
      const peer = this.peers[port];
      if (!peer || peer.port !== from.port || peer.host !== from.address) {
        this.stats.forged++;
        return;
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
      return;
    }
    // a gap ends a conservative run; dilated mode counts it (a disconnected container loses datagrams)
    if (r.seq !== this.rxSeq[port] + 1) {
      if (this.conservative) this.listener?.gap(port, this.rxSeq[port] + 1, r.seq);
      else this.stats.gaps++;
    }
    this.rxSeq[port] = r.seq;
    this.acked(port, r.ack);
    if (++this.rxUnacked[port] >= ACK_EVERY) {
      this.wantsAck[port] = true;
      if (!this.conservative && !this.flushQueued) {
        this.flushQueued = true;
        queueMicrotask(this.flush);
      }
    }
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
        continue;
      }
      if (f.c !== 0) {
        // the frame check fails: the wire corrupted it
        this.stats.corrupted++;
        continue;
      }
      if (!this.conservative) fid.arrivalLateness.record(now > f.a ? now - f.a : 0);
      sched.atKeyed(f.a, lane + this.frameSeq[port]++, this.deliver, port, f);
      if (f.a > latest) latest = f.a;
    }
    if (this.conservative) {
      if (r.promise > this.inClock[port]) {
        this.inClock[port] = r.promise;
        this.listener?.promised(port);
      }
      return;
    }
    if (this.eager && latest > now) sched.runDue(latest);
    else sched.arm();
  }

  async close(): Promise<void> {
    this.flush();
    await this.sent();
    const s = this.socket;
    this.socket = null;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
