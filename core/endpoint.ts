/**
 * The UDP endpoint of a process: one socket for all its ports. Frames committed on a port are batched
 * per next hop and flushed once the current burst of events is done, so frames that leave together
 * share a datagram (up to the size cap). Arriving datagrams are decoded, checked, and handed to the
 * scheduler at each frame's stamped arrival time; anything malformed is counted and dropped.
 */
import dgram from 'node:dgram';
import { Codec, MAX_DATAGRAM } from './codec.js';
import type { Frame } from './frame.js';
import type { Scheduler } from './scheduler.js';

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
}

/** Receives each frame at its handling time: `port` is the local ingress port index. */
export type FrameHandler = (now: number, port: number, frame: Frame) => void;

/** Frames per datagram: 31-byte records leave ample room; keeps one datagram under MAX_DATAGRAM. */
const MAX_BATCH = 64;

export class Endpoint {
  readonly stats: EndpointStats = {
    datagramsOut: 0,
    datagramsIn: 0,
    framesOut: 0,
    framesIn: 0,
    malformed: 0,
    corrupted: 0,
    sendErrors: 0,
  };
  private readonly codec = new Codec();
  private socket: dgram.Socket | null = null;
  private peers: Array<PeerAddress | null> = [];
  private batches: Frame[][] = [];
  private dirty: number[] = [];
  private flushQueued = false;
  private handler: FrameHandler = () => {};

  /**
   * @param eager for a node with a single link (a host): frames on one link arrive in stamp order,
   *   so once a frame stamped `a` is in, nothing earlier can still come and every event up to `a`
   *   can run at once instead of waiting for physical time (conservative synchronization over one
   *   input). The node then sends its own frames earlier, which gives the next hop more lookahead.
   */
  constructor(
    private readonly sched: Scheduler,
    private readonly portCount: number,
    private readonly eager = false,
  ) {
    for (let i = 0; i < portCount; i++) this.batches.push([]);
  }

  onFrame(handler: FrameHandler): void {
    this.handler = handler;
  }

  /** Binds the socket; resolves to the bound UDP port. */
  async bind(host: string, port = 0): Promise<number> {
    const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 << 20, sendBufferSize: 4 << 20 });
    this.socket = socket;
    socket.on('message', (buf) => this.receive(buf));
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
  }

  /** Queues a committed frame for the peer of `port`; sent with the others of this burst. */
  send(port: number, frame: Frame): void {
    const b = this.batches[port];
    if (b.length === 0) this.dirty.push(port);
    b.push(frame);
    if (b.length >= MAX_BATCH) this.flushPort(port);
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flush);
    }
  }

  readonly flush = (): void => {
    this.flushQueued = false;
    for (const port of this.dirty) this.flushPort(port);
    this.dirty.length = 0;
  };

  private flushPort(port: number): void {
    const b = this.batches[port];
    if (b.length === 0) return;
    const peer = this.peers[port];
    const socket = this.socket;
    if (peer && socket) {
      let buf = this.codec.encode(peer.peerPort, b);
      if (buf.length > MAX_DATAGRAM) {
        // large scheme headers: fall back to one frame per datagram
        for (const f of b) {
          buf = this.codec.encode(peer.peerPort, [f]);
          this.sendBuf(buf, peer, 1);
        }
      } else {
        this.sendBuf(buf, peer, b.length);
      }
    }
    b.length = 0;
  }

  private sendBuf(buf: Buffer, peer: PeerAddress, frames: number): void {
    this.stats.datagramsOut++;
    this.stats.framesOut += frames;
    // errors (e.g. a full socket buffer) come to the callback; close() waits for sends in flight, as a
    // socket closed right after send() silently drops the datagram
    this.inFlight++;
    this.socket!.send(buf, peer.port, peer.host, this.sendDone);
  }

  private inFlight = 0;
  private drained: (() => void) | null = null;
  private readonly sendDone = (err: Error | null): void => {
    if (err) this.stats.sendErrors++;
    if (--this.inFlight === 0 && this.drained) this.drained();
  };

  private readonly deliver = (now: number, port: number, frame: Frame): void => {
    this.handler(now, port, frame);
  };

  /** Decodes a datagram and schedules its frames; public so tests can feed raw bytes. */
  receive(buf: Buffer): void {
    this.stats.datagramsIn++;
    const r = this.codec.decode(buf);
    if (!r.ok || r.port < 0 || r.port >= this.portCount || !Number.isInteger(r.port)) {
      this.stats.malformed++;
      return;
    }
    const now = this.sched.now();
    const fid = this.sched.fidelity;
    let latest = 0;
    for (const f of r.frames) {
      this.stats.framesIn++;
      if (f.c !== 0) {
        // the frame check fails: the wire corrupted it
        this.stats.corrupted++;
        continue;
      }
      fid.framesHandled++;
      fid.arrivalLateness.record(now > f.a ? now - f.a : 0);
      this.sched.at(f.a, this.deliver, r.port, f);
      if (f.a > latest) latest = f.a;
    }
    if (this.eager && latest > now) this.sched.runDue(latest);
    else this.sched.arm();
  }

  async close(): Promise<void> {
    this.flush();
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    const s = this.socket;
    this.socket = null;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
