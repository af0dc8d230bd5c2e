/**
 * pcapng blocks, written by hand (the PCAP Next Generation format, draft-ietf-opsawg-pcapng): a
 * section header, interface descriptions, name resolution, enhanced packets and interface statistics —
 * all dcemu captures need. Blocks are little-endian; readers learn the byte order from the section
 * header's magic. Each block is `type, total length, body (padded to 4 bytes), total length`; options
 * are `code, length, value (padded)`, closed by an end-of-options entry.
 */

export const BlockType = {
  SectionHeader: 0x0a0d0d0a,
  InterfaceDescription: 1,
  NameResolution: 4,
  InterfaceStatistics: 5,
  EnhancedPacket: 6,
} as const;

/** LINKTYPE_ETHERNET (tcpdump.org link-layer header types) */
export const LINKTYPE_ETHERNET = 1;
const BYTE_ORDER_MAGIC = 0x1a2b3c4d;

/** Option codes used here (pcapng §4, §5). */
const Opt = {
  end: 0,
  comment: 1,
  shbUserAppl: 4,
  ifName: 2,
  ifDescription: 3,
  ifSpeed: 8,
  ifTsresol: 9,
  epbFlags: 2,
  isbIfRecv: 4,
  isbOsDrop: 7,
} as const;

/** epb_flags: bits 0-1 direction (2: outbound), bit 24 a CRC (frame check) error */
export const EpbFlags = { Outbound: 2, CrcError: 1 << 24 } as const;

const pad4 = (n: number): number => (n + 3) & ~3;

interface Option {
  code: number;
  value: Buffer;
}

function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return b;
}

function u64(v: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(Math.max(0, Math.round(v))));
  return b;
}

function text(s: string): Buffer {
  return Buffer.from(s, 'utf8');
}

function encodeOptions(opts: Option[]): Buffer {
  if (opts.length === 0) return Buffer.alloc(0);
  let size = 4;
  for (const o of opts) size += 4 + pad4(o.value.length);
  const b = Buffer.alloc(size);
  let off = 0;
  for (const o of opts) {
    b.writeUInt16LE(o.code, off);
    b.writeUInt16LE(o.value.length, off + 2);
    o.value.copy(b, off + 4);
    off += 4 + pad4(o.value.length);
  }
  // opt_endofopt: code 0, length 0 (the buffer is zeroed)
  return b;
}

/** A whole block around `parts` (each padded to 4 bytes as it is appended). */
function block(type: number, parts: Buffer[]): Buffer {
  let body = 0;
  for (const p of parts) body += pad4(p.length);
  const total = 12 + body;
  const b = Buffer.alloc(total);
  b.writeUInt32LE(type, 0);
  b.writeUInt32LE(total, 4);
  let off = 8;
  for (const p of parts) {
    p.copy(b, off);
    off += pad4(p.length);
  }
  b.writeUInt32LE(total, off);
  return b;
}

/** Timestamp in units of if_tsresol (here nanoseconds) as pcapng's high and low 32-bit words. */
function timestamp(ns: number): Buffer {
  const t = Math.max(0, Math.round(ns));
  const b = Buffer.alloc(8);
  b.writeUInt32LE(Math.floor(t / 2 ** 32), 0);
  b.writeUInt32LE(t % 2 ** 32, 4);
  return b;
}

/** Section header: byte-order magic, version 1.0, section length unknown (-1). */
export function sectionHeader(opts: { userAppl?: string; comment?: string } = {}): Buffer {
  const head = Buffer.alloc(16);
  head.writeUInt32LE(BYTE_ORDER_MAGIC, 0);
  head.writeUInt16LE(1, 4);
  head.writeUInt16LE(0, 6);
  head.writeBigInt64LE(-1n, 8);
  const options: Option[] = [];
  if (opts.comment) options.push({ code: Opt.comment, value: text(opts.comment) });
  if (opts.userAppl) options.push({ code: Opt.shbUserAppl, value: text(opts.userAppl) });
  return block(BlockType.SectionHeader, [head, encodeOptions(options)]);
}

export interface InterfaceInit {
  linkType: number;
  snapLen: number;
  name?: string;
  description?: string;
  /** link rate, bit/s */
  speedBps?: number;
}

/** Interface description with nanosecond timestamps (if_tsresol = 9: 10^-9 s). */
export function interfaceDescription(i: InterfaceInit): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16LE(i.linkType, 0);
  head.writeUInt32LE(i.snapLen, 4);
  const options: Option[] = [];
  if (i.name) options.push({ code: Opt.ifName, value: text(i.name) });
  if (i.description) options.push({ code: Opt.ifDescription, value: text(i.description) });
  if (i.speedBps !== undefined) options.push({ code: Opt.ifSpeed, value: u64(i.speedBps) });
  options.push({ code: Opt.ifTsresol, value: Buffer.from([9]) });
  return block(BlockType.InterfaceDescription, [head, encodeOptions(options)]);
}

/** Name resolution: IPv4 address -> name records (nrb_record_ipv4), closed by nrb_record_end. */
export function nameResolution(entries: ReadonlyArray<readonly [Buffer, string]>): Buffer {
  const records: Buffer[] = [];
  for (const [addr, name] of entries) {
    const value = Buffer.concat([addr, text(name), Buffer.from([0])]);
    const r = Buffer.alloc(4 + pad4(value.length));
    r.writeUInt16LE(1, 0);
    r.writeUInt16LE(value.length, 2);
    value.copy(r, 4);
    records.push(r);
  }
  records.push(Buffer.alloc(4));
  return block(BlockType.NameResolution, records);
}

export interface PacketInit {
  interfaceId: number;
  /** ns since the epoch of the capture */
  tsNs: number;
  /** the packet's length on the wire; `data` may be shorter (snapped) */
  origLen: number;
  data: Buffer;
  flags?: number;
  comment?: string;
}

export function enhancedPacket(p: PacketInit): Buffer {
  const head = Buffer.alloc(20);
  head.writeUInt32LE(p.interfaceId, 0);
  timestamp(p.tsNs).copy(head, 4);
  head.writeUInt32LE(p.data.length, 12);
  head.writeUInt32LE(p.origLen, 16);
  const options: Option[] = [];
  if (p.comment) options.push({ code: Opt.comment, value: text(p.comment) });
  if (p.flags !== undefined) options.push({ code: Opt.epbFlags, value: u32(p.flags) });
  return block(BlockType.EnhancedPacket, [head, p.data, encodeOptions(options)]);
}

/** Interface statistics at `tsNs`: packets the interface saw, and how many the capture left out. */
export function interfaceStatistics(s: {
  interfaceId: number;
  tsNs: number;
  received: number;
  dropped: number;
}): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt32LE(s.interfaceId, 0);
  timestamp(s.tsNs).copy(head, 4);
  const options: Option[] = [
    { code: Opt.isbIfRecv, value: u64(s.received) },
    { code: Opt.isbOsDrop, value: u64(s.dropped) },
  ];
  return block(BlockType.InterfaceStatistics, [head, encodeOptions(options)]);
}
