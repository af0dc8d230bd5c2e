/**
 * One emulated packet (docs/architecture.md: frames, ports and links). The datagram carries only what protocols need; `size` is the
 * virtual wire size the link model charges time for. Field names are short because every frame is
 * encoded; the comments give the long names.
 */

export const FrameType = {
  /** transport payload */
  Data: 0,
  /** transport acknowledgement */
  Ack: 1,
  /** link liveness keepalive (BFD-like), consumed by the receiving port's detector */
  Keepalive: 2,
  /** scheme-specific control (arbiter requests, rsvp, tokens, pushback ...) */
  Control: 3,
  /** clock synchronization (PTP) */
  Ptp: 4,
  /** route updates between switches: the hosts a switch can no longer reach (BGP-like withdrawal) */
  Routing: 5,
} as const;
export type FrameType = (typeof FrameType)[keyof typeof FrameType];

/** ECN codepoints (RFC 3168): not ECN-capable, ECN-capable transport, congestion experienced. */
export const Ecn = { NotEct: 0, Ect: 1, Ce: 3 } as const;

/** Priority classes: 0 is the lowest; 7 the highest (strict priority). */
export const PRIORITIES = 8;
export const Priority = { BestEffort: 0, Ack: 6, Control: 7 } as const;

export interface Frame {
  /** type (FrameType) */
  t: number;
  /** source node id */
  s: number;
  /** destination node id */
  d: number;
  /** flow id */
  f: number;
  /** sequence (segment number for data, cumulative ack for acks) */
  q: number;
  /** virtual size in bytes on the wire */
  z: number;
  /** priority class 0..7 */
  p: number;
  /** ECN codepoint */
  e: number;
  /** physical time (virtual ns) at which the frame has fully arrived at the next hop */
  a: number;
  /** id of the switch where the path turned downward (0 = not yet), for path accounting */
  v: number;
  /** frame check: 0 when intact, 1 when the wire corrupted it */
  c: number;
  /** source route: remaining hops as egress port indices, or null for table routing */
  r: number[] | null;
  /** scheme header / small payload (msgpack-able), or null */
  x: unknown;
}

export function makeFrame(init: Partial<Frame> & Pick<Frame, 't' | 's' | 'd' | 'z'>): Frame {
  return {
    t: init.t,
    s: init.s,
    d: init.d,
    f: init.f ?? 0,
    q: init.q ?? 0,
    z: init.z,
    p: init.p ?? 0,
    e: init.e ?? 0,
    a: init.a ?? 0,
    v: init.v ?? 0,
    c: init.c ?? 0,
    r: init.r ?? null,
    x: init.x ?? null,
  };
}

/** Standard sizes (bytes) of the emulated wire, Ethernet-like. */
export const WireSize = {
  /** maximum frame on the wire, with all headers */
  Mtu: 1500,
  /** payload bytes carried by a full data frame (MTU minus 40 bytes of IP+transport headers) */
  Mss: 1460,
  /** header bytes charged to each data frame beyond its payload */
  Header: 40,
  /** a bare acknowledgement or control frame */
  Small: 64,
} as const;
