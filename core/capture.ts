/**
 * Packet capture at egress ports (`run.capture`). A captured port hands every frame it transmits to the
 * recorder at the start of its serialization, after the fault layer decided its fate; the recorder
 * writes it as a record holding the dcemu header — a fixed 22-byte binary layout that tools/dcemu.lua
 * decodes — followed by the frame's source route and scheme header in msgpack. Records collect in one
 * bounded chunk that the node ships to the orchestrator over the control channel (on each barrier, each
 * progress snapshot, when full and at the end), so a node in a container needs no shared folder; the
 * orchestrator wraps each record in Ethernet/IPv4/UDP and writes pcapng (orchestrator/engine/capture.ts).
 * Past `limit` frames a port's frames are only counted, so a capture never grows without bound.
 */
import { Packr } from 'msgpackr';
import { WireVerdict } from './fault-filter.js';
import type { Frame } from './frame.js';

/** What `run.capture` asks of one node: which of its ports, and how many frames at most per port. */
export interface CaptureConfig {
  /** port indices whose egress is captured */
  ports: number[];
  /** frames recorded per port at most; the rest are counted */
  limit: number;
}

/**
 * The dcemu header, big-endian, at the start of the captured UDP payload:
 *
 *   0  u8   version (1)
 *   1  u8   kind: FrameType (0 data, 1 ack, 2 keepalive, 3 control, 4 ptp)
 *   2  u8   flags: bits 0-2 priority class, bits 3-4 ECN codepoint, bits 5-6 fate (CaptureFate)
 *   3  u8   length of the extension that follows (255: 255 bytes or more)
 *   4  u16  source node id
 *   6  u16  destination node id
 *   8  u32  flow id
 *  12  u32  sequence
 *  16  u32  virtual size, bytes
 *  20  u16  id of the switch where the path turned down (0: not yet)
 *  22  ...  extension: msgpack [route, scheme header], present when either is
 *
 * 22 bytes, so that Ethernet (14) + IPv4 (20) + UDP (8) + this header fill exactly the smallest frame
 * the wire charges (MIN_FRAME, 64 bytes). Integers wider than their field keep their low bits.
 */
export const DcemuHeader = {
  version: 0,
  kind: 1,
  flags: 2,
  extLength: 3,
  src: 4,
  dst: 6,
  flow: 8,
  seq: 12,
  size: 16,
  via: 20,
  /** bytes of the fixed part */
  bytes: 22,
} as const;
export const DCEMU_VERSION = 1;

/** What became of a captured frame below the port: the fault layer's verdict. */
export const CaptureFate = { Sent: 0, LinkDown: 1, Lost: 2, Corrupted: 3 } as const;

/** Extension bytes kept per frame: a longer route + scheme header is left out (its length still says 255). */
export const MAX_EXTENSION = 1024;

/**
 * A record in a shipped chunk: f64 transmission start (physical time, virtual ns), u16 port index,
 * u16 length of the dcemu bytes, then those bytes (the header and the kept extension).
 */
export const RECORD_HEAD = 12;

/** Records are shipped at the latest when this many bytes are waiting: bounds a node's capture memory. */
export const CHUNK_BYTES = 256 * 1024;

/** Where chunks go: the control channel. `dropped[i]` counts frames of `config.ports[i]` past the limit. */
export type CaptureShip = (records: Buffer, dropped: number[]) => void;

export class CaptureRecorder {
  /** frames recorded, per entry of `config.ports` */
  readonly captured: number[];
  /** frames past the limit, per entry of `config.ports` */
  readonly dropped: number[];
  private readonly slotOf = new Map<number, number>();
  private readonly chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;
  /** whether `dropped` changed since the last shipment */
  private droppedDirty = false;
  private readonly packr = new Packr({ useRecords: false });
  private readonly extension: unknown[] = [null, null];

  constructor(
    private readonly config: CaptureConfig,
    private readonly ship: CaptureShip,
  ) {
    for (const [i, p] of config.ports.entries()) this.slotOf.set(p, i);
    this.captured = config.ports.map(() => 0);
    this.dropped = config.ports.map(() => 0);
  }

  /** The port's capture hook (EgressPort.capture): one frame at its transmission start, with the wire's verdict. */
  readonly record = (port: number, f: Frame, txStart: number, verdict: number): void => {
    const slot = this.slotOf.get(port);
    if (slot === undefined) return;
    if (this.captured[slot] >= this.config.limit) {
      this.dropped[slot]++;
      this.droppedDirty = true;
      return;
    }
    this.captured[slot]++;
    let ext: Buffer | null = null;
    let extLen = 0;
    if (f.r !== null || f.x !== null) {
      this.extension[0] = f.r;
      this.extension[1] = f.x;
      try {
        ext = this.packr.pack(this.extension);
        extLen = ext.length;
      } catch {
        // a scheme header msgpack cannot hold: the capture says "too long" rather than stop the node
        extLen = MAX_EXTENSION + 1;
      }
    }
    const kept = extLen <= MAX_EXTENSION ? extLen : 0;
    const dlen = DcemuHeader.bytes + kept;
    if (this.used + RECORD_HEAD + dlen > CHUNK_BYTES) this.flush();
    const b = this.chunk;
    let o = this.used;
    o = b.writeDoubleBE(txStart, o);
    o = b.writeUInt16BE(port, o);
    o = b.writeUInt16BE(dlen, o);
    const fate =
      verdict === WireVerdict.Down
        ? CaptureFate.LinkDown
        : verdict === WireVerdict.Lost
          ? CaptureFate.Lost
          : f.c !== 0
            ? CaptureFate.Corrupted
            : CaptureFate.Sent;
    b[o + DcemuHeader.version] = DCEMU_VERSION;
    b[o + DcemuHeader.kind] = f.t & 0xff;
    b[o + DcemuHeader.flags] = (f.p & 7) | ((f.e & 3) << 3) | (fate << 5);
    b[o + DcemuHeader.extLength] = Math.min(extLen, 255);
    b.writeUInt16BE(f.s & 0xffff, o + DcemuHeader.src);
    b.writeUInt16BE(f.d & 0xffff, o + DcemuHeader.dst);
    b.writeUInt32BE(f.f >>> 0, o + DcemuHeader.flow);
    b.writeUInt32BE(f.q >>> 0, o + DcemuHeader.seq);
    b.writeUInt32BE(f.z >>> 0, o + DcemuHeader.size);
    b.writeUInt16BE(f.v & 0xffff, o + DcemuHeader.via);
    o += DcemuHeader.bytes;
    if (kept > 0) o += ext!.copy(b, o, 0, kept);
    this.used = o;
  };

  /** Ships what is waiting (records, or new counts of frames past the limit). */
  flush(): void {
    if (this.used === 0 && !this.droppedDirty) return;
    const records = Buffer.from(this.chunk.subarray(0, this.used));
    this.used = 0;
    this.droppedDirty = false;
    this.ship(records, [...this.dropped]);
  }
}
