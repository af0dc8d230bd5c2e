/**
 * Packet capture without processes: the pcapng blocks parse back (lengths, options, 64-bit
 * timestamps), the node's recorder writes the dcemu header and bounds itself, the orchestrator turns
 * records into Ethernet/IPv4/UDP packets of the frames' virtual sizes, and `run.capture` names ports
 * or fails with file, line and field.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { unpack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { CaptureRecorder, CHUNK_BYTES, DcemuHeader, RECORD_HEAD } from '../core/capture.js';
import { WireVerdict } from '../core/fault-filter.js';
import { Ecn, FrameType, makeFrame } from '../core/frame.js';
import { monotonicEpoch } from '../core/time.js';
import { CaptureFiles, DCEMU_UDP_PORT, ipChecksum, SNAPLEN } from '../orchestrator/engine/capture.js';
import { ScenarioError } from '../orchestrator/engine/errors.js';
import {
  BlockType,
  EpbFlags,
  enhancedPacket,
  interfaceDescription,
  interfaceStatistics,
  LINKTYPE_ETHERNET,
  nameResolution,
  sectionHeader,
} from '../orchestrator/engine/pcapng.js';
import { planRun } from '../orchestrator/engine/plan.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';
import { tempOut } from './helpers.js';
import { option, readPcapng } from './pcapng-reader.js';

describe('pcapng blocks', () => {
  it('parse back: lengths agree, nanosecond resolution, 64-bit timestamps, snapped packets, statistics', () => {
    const data = Buffer.from([1, 2, 3, 4, 5]);
    const file = Buffer.concat([
      sectionHeader({ userAppl: 'dcemu', comment: 'a run' }),
      interfaceDescription({ linkType: LINKTYPE_ETHERNET, snapLen: 128, name: 'leaf0:2', speedBps: 1e10 }),
      nameResolution([[Buffer.from([198, 18, 0, 10]), 'h0']]),
      // 5e12 ns needs the high word: 5e12 = 1164 * 2^32 + 658067456
      enhancedPacket({
        interfaceId: 0,
        tsNs: 5e12,
        origLen: 1500,
        data,
        flags: EpbFlags.Outbound,
        comment: 'x',
      }),
      enhancedPacket({ interfaceId: 0, tsNs: 7, origLen: 64, data: Buffer.alloc(64, 9) }),
      interfaceStatistics({ interfaceId: 0, tsNs: 6e12, received: 12, dropped: 10 }),
    ]);
    const p = readPcapng(file);
    expect(p.blocks.map((b) => b.type)).toEqual([
      BlockType.SectionHeader,
      BlockType.InterfaceDescription,
      BlockType.NameResolution,
      BlockType.EnhancedPacket,
      BlockType.EnhancedPacket,
      BlockType.InterfaceStatistics,
    ]);
    // SHB: 28 bytes + options (comment 4+8, user application 4+8, end 4)
    expect(p.blocks[0].length).toBe(28 + 12 + 12 + 4);
    expect(option(p.sectionOptions, 4)?.toString()).toBe('dcemu');
    expect(option(p.sectionOptions, 1)?.toString()).toBe('a run');
    const [idb] = p.interfaces;
    expect(idb).toMatchObject({ linkType: 1, snapLen: 128 });
    expect(option(idb.options, 9)).toEqual(Buffer.from([9]));
    expect(option(idb.options, 2)?.toString()).toBe('leaf0:2');
    expect(option(idb.options, 8)?.readBigUInt64LE()).toBe(10_000_000_000n);
    expect(p.names).toEqual([['198.18.0.10', 'h0']]);
    const [a, b] = p.packets;
    expect(a).toMatchObject({ interfaceId: 0, ts: 5e12, capLen: 5, origLen: 1500 });
    expect(a.data).toEqual(data);
    // the high word comes first
    expect(p.blocks[3].body.readUInt32LE(4)).toBe(1164);
    expect(p.blocks[3].body.readUInt32LE(8)).toBe(5e12 - 1164 * 2 ** 32);
    // 5 data bytes padded to 8; comment 4+4; flags 4+4; end 4
    expect(p.blocks[3].length).toBe(32 + 8 + 8 + 8 + 4);
    expect(option(a.options, 1)?.toString()).toBe('x');
    expect(option(a.options, 2)?.readUInt32LE()).toBe(2);
    expect(b).toMatchObject({ ts: 7, capLen: 64, origLen: 64, options: [] });
    expect(p.blocks[4].length).toBe(32 + 64);
    const [isb] = p.stats;
    expect(isb.ts).toBe(6e12);
    expect(option(isb.options, 4)?.readBigUInt64LE()).toBe(12n);
    expect(option(isb.options, 7)?.readBigUInt64LE()).toBe(10n);
  });
});

/** Records shipped by a recorder, split back into [txStart, port, dcemu bytes]. */
function records(chunk: Buffer): Array<[number, number, Buffer]> {
  const out: Array<[number, number, Buffer]> = [];
  for (let o = 0; o < chunk.length; ) {
    const dlen = chunk.readUInt16BE(o + 10);
    out.push([
      chunk.readDoubleBE(o),
      chunk.readUInt16BE(o + 8),
      chunk.subarray(o + RECORD_HEAD, o + RECORD_HEAD + dlen),
    ]);
    o += RECORD_HEAD + dlen;
  }
  return out;
}

describe('capture recorder (node side)', () => {
  it('writes the dcemu header and the [route, scheme] extension, with the fault layer’s verdict', () => {
    const shipped: Array<[Buffer, number[]]> = [];
    const rec = new CaptureRecorder({ ports: [1, 3], limit: 10 }, (r, d) => shipped.push([r, d]));
    const data = makeFrame({
      t: FrameType.Data,
      s: 2,
      d: 7,
      f: 41,
      q: 9,
      z: 1500,
      p: 0,
      e: Ecn.Ce,
      v: 12,
      x: 60_000,
    });
    rec.record(1, data, 1234.5, WireVerdict.Pass);
    const ka = makeFrame({ t: FrameType.Keepalive, s: 5, d: -1, z: 64, p: 7 });
    rec.record(3, ka, 2000, WireVerdict.Lost);
    const routed = makeFrame({ t: FrameType.Control, s: 1, d: 2, z: 64, p: 7, r: [2, 0] });
    routed.c = 1;
    rec.record(3, routed, 3000, WireVerdict.Pass);
    rec.record(2, data, 4000, WireVerdict.Pass); // not a captured port
    expect(shipped).toEqual([]);
    rec.flush();
    expect(shipped.length).toBe(1);
    const [[chunk, dropped]] = shipped;
    expect(dropped).toEqual([0, 0]);
    const [r0, r1, r2, ...rest] = records(chunk);
    expect(rest).toEqual([]);
    expect(r0[0]).toBe(1234.5);
    expect(r0[1]).toBe(1);
    const h = r0[2];
    expect([h[0], h[1], h[2] & 7, (h[2] >> 3) & 3, h[2] >> 5]).toEqual([1, FrameType.Data, 0, 3, 0]);
    expect(h.readUInt16BE(DcemuHeader.src)).toBe(2);
    expect(h.readUInt16BE(DcemuHeader.dst)).toBe(7);
    expect(h.readUInt32BE(DcemuHeader.flow)).toBe(41);
    expect(h.readUInt32BE(DcemuHeader.seq)).toBe(9);
    expect(h.readUInt32BE(DcemuHeader.size)).toBe(1500);
    expect(h.readUInt16BE(DcemuHeader.via)).toBe(12);
    expect(h[DcemuHeader.extLength]).toBe(h.length - DcemuHeader.bytes);
    expect(unpack(h.subarray(DcemuHeader.bytes))).toEqual([null, 60_000]);
    // a keepalive has no extension; "no destination" is 65535; lost on the wire (fate 2)
    expect(r1[2].length).toBe(DcemuHeader.bytes);
    expect(r1[2].readUInt16BE(DcemuHeader.dst)).toBe(0xffff);
    expect(r1[2][DcemuHeader.flags]).toBe(7 | (2 << 5));
    // corrupted (fate 3), with its source route
    expect(r2[2][DcemuHeader.flags] >> 5).toBe(3);
    expect(unpack(r2[2].subarray(DcemuHeader.bytes))).toEqual([[2, 0], null]);
    rec.flush();
    expect(shipped.length).toBe(1); // nothing new: nothing shipped
  });

  it('keeps at most `limit` frames per port and counts the rest; ships before a chunk overflows', () => {
    const shipped: Array<[Buffer, number[]]> = [];
    const rec = new CaptureRecorder({ ports: [0, 1], limit: 3000 }, (r, d) => shipped.push([r, [...d]]));
    // a big scheme header (~700 bytes of extension) makes records of ~740 bytes
    const f = makeFrame({ t: FrameType.Control, s: 1, d: 2, z: 1500, x: 'y'.repeat(700) });
    for (let i = 0; i < 3005; i++) rec.record(0, f, i, WireVerdict.Pass);
    rec.record(1, f, 0, WireVerdict.Pass);
    rec.flush();
    expect(rec.captured).toEqual([3000, 1]);
    expect(rec.dropped).toEqual([5, 0]);
    for (const [chunk] of shipped) expect(chunk.length).toBeLessThanOrEqual(CHUNK_BYTES);
    expect(shipped.length).toBeGreaterThan(5);
    const all = shipped.flatMap(([c]) => records(c));
    expect(all.length).toBe(3001);
    // in order, none lost between chunks
    expect(all.filter((r) => r[1] === 0).map((r) => r[0])).toEqual([...Array(3000).keys()]);
    expect(shipped.at(-1)![1]).toEqual([5, 0]);
    // an extension past 1024 bytes is left out; its length still says 255 (or more)
    const big = makeFrame({ t: FrameType.Control, s: 1, d: 2, z: 64, x: 'z'.repeat(2000) });
    rec.record(1, big, 1, WireVerdict.Pass);
    rec.flush();
    const [last] = records(shipped.at(-1)![0]);
    expect(last[2].length).toBe(DcemuHeader.bytes);
    expect(last[2][DcemuHeader.extLength]).toBe(255);
  });
});

const STAR = `topology: { kind: star, hosts: 3 }
workload: { pattern: list, duration: 10us, flows: [{ src: h0, dst: h2, size: 3KB }] }
`;
const resolve = (text: string) => resolveScenario(parseScenario(text, 'c.yaml'));

describe('capture files (orchestrator side)', () => {
  it('turns records into Ethernet/IPv4/UDP packets of the virtual size, at fabric time, snapped at 128 bytes', () => {
    const sc = resolve(`${STAR}run: { capture: [[h0, sw0]] }\n`);
    const plan = planRun(sc, { epoch: monotonicEpoch(), bindHost: () => '127.0.0.1', logDir: null });
    const dir = tempOut('capture-unit');
    const errors: string[] = [];
    const files = new CaptureFiles(join(dir, 'capture'), sc.topology, plan.nodes, (m) => errors.push(m));
    const h0 = plan.nodes.find((n) => n.name === 'h0')!;
    const sw0 = plan.nodes.find((n) => n.name === 'sw0')!;
    expect(h0.capture).toEqual({ ports: [0], limit: 100_000 });
    expect(sw0.capture).toEqual({ ports: [0], limit: 100_000 });
    let chunk: Buffer = Buffer.alloc(0);
    let dropped: number[] = [];
    const rec = new CaptureRecorder(h0.capture!, (r, d) => {
      chunk = r;
      dropped = d;
    });
    const data = makeFrame({ t: FrameType.Data, s: 0, d: 2, f: 5, q: 3, z: 1500, e: Ecn.Ect, x: 3000 });
    const ack = makeFrame({ t: FrameType.Ack, s: 0, d: 1, f: 6, q: 1, z: 64, p: 6, x: 1 });
    const runt = makeFrame({ t: FrameType.Data, s: 0, d: 2, f: 5, q: 4, z: 41, x: 3000 });
    const trafficStart = 1e9;
    rec.record(0, data, trafficStart + 5000, WireVerdict.Pass);
    data.c = 1;
    rec.record(0, data, trafficStart + 6200, WireVerdict.Pass);
    rec.record(0, ack, trafficStart + 7400, WireVerdict.Pass);
    rec.record(0, runt, trafficStart + 8000, WireVerdict.Pass);
    rec.flush();
    files.write('h0', chunk, dropped, trafficStart);
    const summary = files.close(9000);
    expect(errors).toEqual([]);
    expect(summary).toEqual([
      { file: 'capture/h0-sw0.pcapng', node: 'h0', port: 0, peer: 'sw0', frames: 4, dropped: 0 },
      { file: 'capture/sw0-h0.pcapng', node: 'sw0', port: 0, peer: 'h0', frames: 0, dropped: 0 },
    ]);
    const p = readPcapng(readFileSync(join(dir, 'capture/h0-sw0.pcapng')));
    expect(p.interfaces.length).toBe(1);
    expect(option(p.interfaces[0].options, 2)?.toString()).toBe('h0:0');
    expect(p.names).toEqual([
      ['198.18.0.10', 'h0'],
      ['198.18.0.11', 'h1'],
      ['198.18.0.12', 'h2'],
      ['198.18.0.13', 'sw0'],
    ]);
    expect(p.packets.map((x) => x.ts)).toEqual([5000, 6200, 7400, 8000]);
    // bytes on the wire: the virtual size, and at least the 64 bytes the wire charges
    expect(p.packets.map((x) => [x.origLen, x.capLen])).toEqual([
      [1500, SNAPLEN],
      [1500, SNAPLEN],
      [64, 64],
      [64, 64],
    ]);
    const d = p.packets[0].data;
    expect([...d.subarray(0, 6)]).toEqual([2, 0xdc, 0, 0, 0, 3]); // to sw0 (id 3)
    expect([...d.subarray(6, 12)]).toEqual([2, 0xdc, 0, 0, 0, 0]); // from h0
    expect(d.readUInt16BE(12)).toBe(0x0800);
    expect(d[14]).toBe(0x45);
    expect(d[15] & 3).toBe(Ecn.Ect);
    expect(d.readUInt16BE(16)).toBe(1500 - 14);
    expect(d[23]).toBe(17);
    expect(d.readUInt16BE(24)).toBe(ipChecksum(d, 14));
    expect([...d.subarray(26, 30)]).toEqual([198, 18, 0, 10]);
    expect([...d.subarray(30, 34)]).toEqual([198, 18, 0, 12]);
    expect(d.readUInt16BE(36)).toBe(DCEMU_UDP_PORT);
    expect(d.readUInt16BE(38)).toBe(1500 - 34);
    const dcemu = d.subarray(42);
    expect(dcemu.readUInt32BE(DcemuHeader.size)).toBe(1500);
    expect(dcemu.readUInt32BE(DcemuHeader.flow)).toBe(5);
    expect(
      unpack(dcemu.subarray(DcemuHeader.bytes, DcemuHeader.bytes + dcemu[DcemuHeader.extLength])),
    ).toEqual([null, 3000]);
    // zeros after the header, up to the snap length
    expect(d.subarray(42 + DcemuHeader.bytes + dcemu[DcemuHeader.extLength]).every((x) => x === 0)).toBe(
      true,
    );
    // outbound; the corrupted copy carries the CRC error flag
    expect(option(p.packets[0].options, 2)?.readUInt32LE()).toBe(EpbFlags.Outbound);
    expect(option(p.packets[1].options, 2)?.readUInt32LE()).toBe(EpbFlags.Outbound | EpbFlags.CrcError);
    // an ack's scheme header does not fit in its 64 bytes: it travels as the packet comment
    expect(option(p.packets[2].options, 1)?.toString()).toBe('dcemu: hdr=1');
    expect(p.packets[2].data.readUInt16BE(16)).toBe(50);
    expect(option(p.packets[0].options, 1)).toBeUndefined();
    expect(option(p.stats[0].options, 4)?.readBigUInt64LE()).toBe(4n);
    expect(p.stats[0].ts).toBe(9000);
  });

  it('counts frames past the limit from each process of a node (a restarted container counts from 0)', () => {
    const sc = resolve(`${STAR}run: { capture: [h1] }\n`);
    const plan = planRun(sc, { epoch: monotonicEpoch(), bindHost: () => '127.0.0.1', logDir: null });
    const dir = tempOut('capture-unit');
    const files = new CaptureFiles(join(dir, 'capture'), sc.topology, plan.nodes, () => {});
    files.write('h1', new Uint8Array(0), [4], 0);
    files.write('h1', new Uint8Array(0), [7], 0);
    files.write('h1', new Uint8Array(0), [2], 0);
    const s = files.close(0);
    expect(s.find((x) => x.node === 'h1')?.dropped).toBe(9);
    expect(files.close(0)).toBe(s);
  });
});

describe('run.capture in a scenario', () => {
  it('names links (both directions) and nodes (every link of them), in topology order', () => {
    const sc = resolve(`${STAR}run: { capture: [h2, [sw0, h0], h2], captureLimit: 50 }\n`);
    expect(sc.run.capture).toEqual([
      { node: 'h0', port: 0, peer: 'sw0' },
      { node: 'h2', port: 0, peer: 'sw0' },
      { node: 'sw0', port: 0, peer: 'h0' },
      { node: 'sw0', port: 2, peer: 'h2' },
    ]);
    expect(sc.run.captureLimit).toBe(50);
    expect(resolve(STAR).run.capture).toEqual([]);
  });

  const refused: Array<[string, string, RegExp]> = [
    [
      'an unknown node',
      'run:\n  capture: [h0, hx]\n',
      /^c\.yaml:4: run\.capture\.1: no node named 'hx' in the topology$/,
    ],
    [
      'an unknown link end',
      'run:\n  capture:\n    - [sw0, h9]\n',
      /^c\.yaml:5: run\.capture\.0\.1: no node named 'h9' in the topology$/,
    ],
    [
      'two nodes without a link',
      'run:\n  capture: [[h0, h1]]\n',
      /^c\.yaml:4: run\.capture\.0: no link between 'h0' and 'h1'$/,
    ],
    ['a number', 'run:\n  capture: [3]\n', /^c\.yaml:4: run\.capture\.0: must be string or array, got 3$/],
    ['a link of three', 'run:\n  capture: [[h0, sw0, h1]]\n', /^c\.yaml:4: run\.capture\.0: /],
    ['a zero limit', 'run:\n  captureLimit: 0\n', /^c\.yaml:4: run\.captureLimit: /],
  ];
  it.each(refused)('refuses %s, naming file, line and field', (_, run, message) => {
    expect(() => resolve(`${STAR}${run}`)).toThrow(ScenarioError);
    expect(() => resolve(`${STAR}${run}`)).toThrow(message);
  });
});
