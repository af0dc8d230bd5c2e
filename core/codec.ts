/**
 * Datagram codec on msgpackr. A datagram is `[MAGIC, ingressPort, frame, frame, ...]`: several frames
 * bound for the same next hop share it. Frames use one fixed msgpackr record structure agreed by
 * every process up front, so they travel without key names. A datagram that does not decode, has the
 * wrong magic, holds a frame of the wrong shape, or exceeds the size cap is rejected with a reason,
 * never an exception.
 */
import { Packr } from 'msgpackr';
import type { Frame } from './frame.js';

export const MAGIC = 0xdc;
/** Largest datagram we send or accept: well under loopback's 64 KiB and typical container MTUs x 6. */
export const MAX_DATAGRAM = 8192;

// Flagged shared so that msgpackr restores it after a datagram that redefines its record id inline;
// otherwise one such datagram would make every later datagram undecodable.
const FRAME_KEYS = Object.assign(['t', 's', 'd', 'f', 'q', 'z', 'p', 'e', 'a', 'v', 'c', 'r', 'x'], {
  isShared: true,
});

function packr(): Packr {
  return new Packr({
    structures: [FRAME_KEYS],
    maxSharedStructures: 1,
    shouldShareStructure: () => false,
    saveStructures: () => false,
    getStructures: () => [FRAME_KEYS],
    useRecords: true,
    moreTypes: false,
    bundleStrings: false,
  } as ConstructorParameters<typeof Packr>[0]);
}

export type DecodeResult = { ok: true; port: number; frames: Frame[] } | { ok: false; reason: string };

export class Codec {
  private readonly packr = packr();

  encode(port: number, frames: Frame[]): Buffer {
    const msg: unknown[] = new Array(frames.length + 2);
    msg[0] = MAGIC;
    msg[1] = port;
    for (let i = 0; i < frames.length; i++) msg[i + 2] = frames[i];
    return this.packr.pack(msg);
  }

  decode(buf: Buffer | Uint8Array): DecodeResult {
    if (buf.length > MAX_DATAGRAM) return { ok: false, reason: 'oversized' };
    let msg: unknown;
    try {
      msg = this.packr.unpack(buf);
    } catch {
      return { ok: false, reason: 'undecodable' };
    }
    if (!Array.isArray(msg) || msg.length < 3 || msg[0] !== MAGIC || typeof msg[1] !== 'number') {
      return { ok: false, reason: 'bad-header' };
    }
    const frames = new Array<Frame>(msg.length - 2);
    for (let i = 2; i < msg.length; i++) {
      const f = msg[i] as Frame;
      if (
        f === null ||
        typeof f !== 'object' ||
        typeof f.t !== 'number' ||
        typeof f.s !== 'number' ||
        typeof f.d !== 'number' ||
        typeof f.z !== 'number' ||
        !Number.isFinite(f.a) ||
        !Number.isInteger(f.p) ||
        f.p < 0 ||
        f.p > 7 ||
        !(f.z > 0) ||
        !validRoute(f.r)
      ) {
        return { ok: false, reason: 'bad-frame' };
      }
      frames[i - 2] = f;
    }
    return { ok: true, port: msg[1], frames };
  }
}

/** A source route is null or a list of egress port indices; anything else would crash a switch. */
function validRoute(r: unknown): boolean {
  if (r === null) return true;
  if (!Array.isArray(r)) return false;
  for (const hop of r) if (!Number.isInteger(hop)) return false;
  return true;
}
