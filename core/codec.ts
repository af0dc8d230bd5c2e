/**
 * Datagram codec on msgpackr. A datagram is `[MAGIC, tag, ingressPort, seq, ack, promise, cond, need,
 * frame, ...]`: several frames bound for the same next hop share it, behind a link header — the run's
 * datagram tag (core/auth.ts: a datagram of another run is dropped and counted), the
 * datagram's sequence number on this link direction, the highest sequence the sender got in order on
 * the reverse direction (flow control), and for conservative synchronization (core/sync.ts; 0 in
 * dilated mode) the sender's promise that nothing more arrives on this link before that physical time,
 * its conditional promise (the same, unless the receiver's own frames after `ack` make it answer
 * sooner) and its need (the time it waits to pass; -1: any progress helps). A header with
 * no frames is a null message. Frames use one fixed msgpackr record structure agreed by
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

/** Largest virtual frame size accepted, bytes: jumbo frames and scheme bursts fit; 1e12 does not. */
export const MAX_FRAME_BYTES = 1 << 20;

export interface LinkHeader {
  /** the run's datagram tag (0: none, in tests that feed raw datagrams) */
  tag?: number;
  /** ingress port index at the receiver */
  port: number;
  /** sequence number of this datagram on the link direction, from 1 */
  seq: number;
  /** highest datagram sequence the sender has received in order on the reverse direction */
  ack: number;
  /** nothing more arrives on this link before this physical time, virtual ns (Infinity: never) */
  promise: number;
  /**
   * nothing more arrives before this either, except what the receiver's frames after `ack` cause
   * (0: no such promise)
   */
  cond?: number;
  /** the sender has nothing to do before this time (a single-link node); < 0: any progress helps */
  need?: number;
}

export type DecodeResult =
  | ({ ok: true; frames: Frame[]; tag: number; cond: number; need: number } & LinkHeader)
  | { ok: false; reason: string };

const HEADER = 8;

export class Codec {
  private readonly packr = packr();

  encode(h: LinkHeader, frames: readonly Frame[]): Buffer {
    const msg: unknown[] = new Array(frames.length + HEADER);
    msg[0] = MAGIC;
    msg[1] = h.tag ?? 0;
    msg[2] = h.port;
    msg[3] = h.seq;
    msg[4] = h.ack;
    msg[5] = h.promise;
    // "none" travels in one byte: a conditional promise of 0 promises nothing, a need below 0 is none
    const cond = h.cond ?? 0;
    const need = h.need ?? -1;
    msg[6] = Math.max(cond, 0);
    msg[7] = need >= 0 ? need : -1;
    for (let i = 0; i < frames.length; i++) msg[i + HEADER] = frames[i];
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
    if (
      !Array.isArray(msg) ||
      msg.length < HEADER ||
      msg[0] !== MAGIC ||
      !Number.isInteger(msg[1]) ||
      !Number.isInteger(msg[2]) ||
      !Number.isSafeInteger(msg[3]) ||
      msg[3] < 1 ||
      !Number.isSafeInteger(msg[4]) ||
      msg[4] < 0 ||
      typeof msg[5] !== 'number' ||
      Number.isNaN(msg[5]) ||
      typeof msg[6] !== 'number' ||
      Number.isNaN(msg[6]) ||
      typeof msg[7] !== 'number' ||
      Number.isNaN(msg[7])
    ) {
      return { ok: false, reason: 'bad-header' };
    }
    const frames = new Array<Frame>(msg.length - HEADER);
    for (let i = HEADER; i < msg.length; i++) {
      const f = msg[i] as Frame;
      if (
        f === null ||
        typeof f !== 'object' ||
        !Number.isInteger(f.t) ||
        !Number.isInteger(f.s) ||
        !Number.isInteger(f.d) ||
        typeof f.z !== 'number' ||
        !Number.isFinite(f.a) ||
        !Number.isInteger(f.p) ||
        f.p < 0 ||
        f.p > 7 ||
        !(f.z > 0 && f.z <= MAX_FRAME_BYTES) ||
        typeof f.f !== 'number' ||
        typeof f.q !== 'number' ||
        typeof f.e !== 'number' ||
        typeof f.v !== 'number' ||
        typeof f.c !== 'number' ||
        !validRoute(f.r)
      ) {
        return { ok: false, reason: 'bad-frame' };
      }
      frames[i - HEADER] = f;
    }
    return {
      ok: true,
      tag: msg[1],
      port: msg[2],
      seq: msg[3],
      ack: msg[4],
      promise: msg[5],
      cond: msg[6],
      need: msg[7],
      frames,
    };
  }
}

/** A source route is null or a list of egress port indices; anything else would crash a switch. */
function validRoute(r: unknown): boolean {
  if (r === null) return true;
  if (!Array.isArray(r)) return false;
  for (const hop of r) if (!Number.isInteger(hop)) return false;
  return true;
}
