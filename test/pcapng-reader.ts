/**
 * A strict pcapng reader for tests: walks the blocks of a little-endian section, checking that every
 * block's leading and trailing lengths agree and are multiples of 4, and decodes what dcemu writes
 * (section header, interface description, name resolution, enhanced packets, interface statistics).
 */

export interface PcapngOption {
  code: number;
  value: Buffer;
}

export interface PcapngBlock {
  type: number;
  length: number;
  body: Buffer;
}

export interface PcapngPacket {
  interfaceId: number;
  /** timestamp in if_tsresol units (ns in dcemu files), as a number */
  ts: number;
  capLen: number;
  origLen: number;
  data: Buffer;
  options: PcapngOption[];
}

export interface Pcapng {
  blocks: PcapngBlock[];
  interfaces: Array<{ linkType: number; snapLen: number; options: PcapngOption[] }>;
  packets: PcapngPacket[];
  names: Array<[string, string]>;
  stats: Array<{ interfaceId: number; ts: number; options: PcapngOption[] }>;
  sectionOptions: PcapngOption[];
}

export function readOptions(b: Buffer): PcapngOption[] {
  const out: PcapngOption[] = [];
  // a block may have no options at all; if it has any, they end with opt_endofopt
  if (b.length === 0) return out;
  let o = 0;
  while (o + 4 <= b.length) {
    const code = b.readUInt16LE(o);
    const len = b.readUInt16LE(o + 2);
    if (code === 0) return out;
    if (o + 4 + len > b.length) throw new Error(`option ${code} overruns its block`);
    out.push({ code, value: b.subarray(o + 4, o + 4 + len) });
    o += 4 + ((len + 3) & ~3);
  }
  throw new Error('options without opt_endofopt');
}

export function option(opts: PcapngOption[], code: number): Buffer | undefined {
  return opts.find((o) => o.code === code)?.value;
}

const ts = (b: Buffer, at: number): number => b.readUInt32LE(at) * 2 ** 32 + b.readUInt32LE(at + 4);

export function readPcapng(file: Buffer): Pcapng {
  const r: Pcapng = { blocks: [], interfaces: [], packets: [], names: [], stats: [], sectionOptions: [] };
  let o = 0;
  while (o < file.length) {
    if (o + 12 > file.length) throw new Error(`truncated block at ${o}`);
    const type = file.readUInt32LE(o);
    const length = file.readUInt32LE(o + 4);
    if (length % 4 !== 0 || length < 12 || o + length > file.length)
      throw new Error(`block at ${o}: bad length ${length}`);
    if (file.readUInt32LE(o + length - 4) !== length)
      throw new Error(`block at ${o}: trailing length differs`);
    const body = file.subarray(o + 8, o + length - 4);
    r.blocks.push({ type, length, body });
    switch (type) {
      case 0x0a0d0d0a:
        if (body.readUInt32LE(0) !== 0x1a2b3c4d) throw new Error('section header: not little-endian');
        r.sectionOptions = readOptions(body.subarray(16));
        break;
      case 1:
        r.interfaces.push({
          linkType: body.readUInt16LE(0),
          snapLen: body.readUInt32LE(4),
          options: readOptions(body.subarray(8)),
        });
        break;
      case 4: {
        let p = 0;
        for (;;) {
          const rt = body.readUInt16LE(p);
          const rl = body.readUInt16LE(p + 2);
          if (rt === 0) break;
          const v = body.subarray(p + 4, p + 4 + rl);
          r.names.push([[...v.subarray(0, 4)].join('.'), v.subarray(4, v.indexOf(0, 4)).toString()]);
          p += 4 + ((rl + 3) & ~3);
        }
        break;
      }
      case 6: {
        const capLen = body.readUInt32LE(12);
        r.packets.push({
          interfaceId: body.readUInt32LE(0),
          ts: ts(body, 4),
          capLen,
          origLen: body.readUInt32LE(16),
          data: body.subarray(20, 20 + capLen),
          options: readOptions(body.subarray(20 + ((capLen + 3) & ~3))),
        });
        break;
      }
      case 5:
        r.stats.push({
          interfaceId: body.readUInt32LE(0),
          ts: ts(body, 4),
          options: readOptions(body.subarray(12)),
        });
        break;
    }
    o += length;
  }
  return r;
}
