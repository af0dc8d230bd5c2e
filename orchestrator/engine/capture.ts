/**
 * Packet captures (`run.capture`): the orchestrator's side. Nodes ship records of the frames their
 * captured ports transmit (core/capture.ts) over the control channel; this writes them as they come,
 * one pcapng file per egress port in `<out>/capture/`, so neither side holds a capture in memory.
 *
 * Each frame becomes a real Ethernet/IPv4/UDP packet of its virtual size: Ethernet from this node's
 * MAC to the peer's, IPv4 from the frame's source node to its destination (addresses as `dcemu
 * compose` lays them out in 198.18.0.0/16), UDP port 47100, and the dcemu header as the UDP
 * payload, zeros after it. Packets are snapped at 128 bytes; the packet's length on the wire is the
 * frame's virtual size (at least the 64 bytes the wire charges any frame). Timestamps are fabric time:
 * the start of the frame's serialization, virtual ns since traffic start, at nanosecond resolution.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { unpack } from 'msgpackr';
import { CaptureFate, DcemuHeader, RECORD_HEAD } from '../../core/capture.js';
import type { NodeConfig } from '../../core/messages.js';
import { MIN_FRAME } from '../../core/port.js';
import type { Topology } from '../../topology/types.js';
import { allocateAddresses } from '../runtime/addresses.js';
import { RuntimeError } from './errors.js';
import {
  EpbFlags,
  enhancedPacket,
  interfaceDescription,
  interfaceStatistics,
  LINKTYPE_ETHERNET,
  nameResolution,
  sectionHeader,
} from './pcapng.js';

/**
 * UDP source and destination port of every captured frame: tools/dcemu.lua decodes this port. One
 * fixed port no Wireshark dissector registers (Wireshark 4.0), so nothing else claims the payload.
 */
export const DCEMU_UDP_PORT = 47100;
/** bytes kept of each packet (tcpdump -s 128): the headers, the dcemu header and its extension's start */
export const SNAPLEN = 128;
/** where capture addresses come from: the first half of the benchmarking range, laid out as compose does */
export const CAPTURE_SUBNET = '198.18.0.0/16';

const ETH = 14;
const IPV4 = 20;
const UDP = 8;
/** Ethernet + IPv4 + UDP + the fixed dcemu header: 64 bytes, the smallest frame on the wire (MIN_FRAME) */
export const PACKET_HEADERS = ETH + IPV4 + UDP + DcemuHeader.bytes;

export interface CaptureFileSummary {
  /** path inside the results folder */
  file: string;
  node: string;
  port: number;
  peer: string;
  /** frames written */
  frames: number;
  /** frames the port sent past `run.captureLimit`, counted and not written */
  dropped: number;
}

interface PortFile {
  summary: CaptureFileSummary;
  fd: number;
  srcMac: Buffer;
  dstMac: Buffer;
  pending: Buffer[];
}

interface NodeCapture {
  /** files in the order of the node's `capture.ports` */
  files: PortFile[];
  byPort: Map<number, PortFile>;
  /** frames past the limit reported by earlier processes of this node (a container started again) */
  droppedBase: number[];
  droppedLast: number[];
}

export class CaptureFiles {
  private readonly nodes = new Map<string, NodeCapture>();
  private readonly ipOf: Buffer[] = [];
  private closed: CaptureFileSummary[] | null = null;
  private failed = false;

  /**
   * Creates `<dir>` and one file per captured port (section header, interface, name resolution).
   * `onError` hears the first write failure; the capture stops there, the run goes on.
   */
  constructor(
    private readonly dir: string,
    topo: Topology,
    configs: readonly NodeConfig[],
    private readonly onError: (message: string) => void,
    comment = '',
  ) {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new RuntimeError(`capture: cannot create ${dir}: ${(err as Error).message}`);
    }
    const addr = allocateAddresses(
      topo.nodes.map((n) => n.name),
      CAPTURE_SUBNET,
    ).nodes;
    const names: Array<[Buffer, string]> = [];
    for (const n of topo.nodes) {
      const ip = Buffer.from(addr.get(n.name)!.split('.').map(Number));
      this.ipOf[n.id] = ip;
      names.push([ip, n.name]);
    }
    const nrb = nameResolution(names);
    const shb = sectionHeader({ userAppl: 'dcemu', comment });
    const ids = new Map(topo.nodes.map((n) => [n.name, n.id]));
    for (const c of configs) {
      if (!c.capture) continue;
      const nc: NodeCapture = {
        files: [],
        byPort: new Map(),
        droppedBase: c.capture.ports.map(() => 0),
        droppedLast: c.capture.ports.map(() => 0),
      };
      this.nodes.set(c.name, nc);
      for (const index of c.capture.ports) {
        const p = c.ports[index];
        const parallel = c.ports.filter((q) => q.peer === p.peer).length > 1;
        const file = `${c.name}-${p.peer}${parallel ? `-${index}` : ''}.pcapng`;
        let fd: number;
        try {
          fd = openSync(join(dir, file), 'w');
        } catch (err) {
          // close what is open, writing nothing more
          this.failed = true;
          this.close(0);
          throw new RuntimeError(`capture: cannot create ${join(dir, file)}: ${(err as Error).message}`);
        }
        const idb = interfaceDescription({
          linkType: LINKTYPE_ETHERNET,
          snapLen: SNAPLEN,
          name: `${c.name}:${index}`,
          description: `${c.name} port ${index} toward ${p.peer}, egress, stamped at the start of serialization`,
          speedBps: p.rateBps,
        });
        writeSync(fd, Buffer.concat([shb, idb, nrb]));
        const pf: PortFile = {
          summary: {
            file: `capture/${file}`,
            node: c.name,
            port: index,
            peer: p.peer,
            frames: 0,
            dropped: 0,
          },
          fd,
          srcMac: mac(c.id),
          dstMac: mac(ids.get(p.peer)!),
          pending: [],
        };
        nc.files.push(pf);
        nc.byPort.set(index, pf);
      }
    }
  }

  /** A node's records (core/capture.ts layout); `trafficStart` turns physical time into fabric time. */
  write(node: string, records: Uint8Array, dropped: number[], trafficStart: number): void {
    const nc = this.nodes.get(node);
    if (!nc || this.closed || this.failed) return;
    for (const [i, d] of dropped.entries()) {
      if (i >= nc.files.length || !(d >= 0)) continue;
      // a count going down: the node was started again, counting from 0
      if (d < nc.droppedLast[i]) nc.droppedBase[i] += nc.droppedLast[i];
      nc.droppedLast[i] = d;
      nc.files[i].summary.dropped = nc.droppedBase[i] + d;
    }
    const b = Buffer.from(records.buffer, records.byteOffset, records.byteLength);
    let o = 0;
    while (o + RECORD_HEAD <= b.length) {
      const txStart = b.readDoubleBE(o);
      const port = b.readUInt16BE(o + 8);
      const dlen = b.readUInt16BE(o + 10);
      const start = o + RECORD_HEAD;
      o = start + dlen;
      if (o > b.length || dlen < DcemuHeader.bytes) break;
      const pf = nc.byPort.get(port);
      if (!pf) continue;
      pf.pending.push(this.packet(pf, b.subarray(start, o), txStart - trafficStart));
      pf.summary.frames++;
    }
    try {
      for (const pf of nc.files) {
        if (pf.pending.length === 0) continue;
        writeSync(pf.fd, Buffer.concat(pf.pending));
        pf.pending.length = 0;
      }
    } catch (err) {
      this.fail(`capture: cannot write to ${this.dir}: ${(err as Error).message}`);
    }
  }

  /** One enhanced packet block: the frame as Ethernet/IPv4/UDP with the dcemu header, snapped. */
  private packet(pf: PortFile, dcemu: Buffer, tsNs: number): Buffer {
    const size = dcemu.readUInt32BE(DcemuHeader.size);
    const flags = dcemu[DcemuHeader.flags];
    const wireLen = Math.max(size, MIN_FRAME);
    const data = Buffer.alloc(Math.min(wireLen, SNAPLEN));
    // Ethernet II
    pf.dstMac.copy(data, 0);
    pf.srcMac.copy(data, 6);
    data.writeUInt16BE(0x0800, 12);
    // IPv4: DSCP = class selector of the priority, ECN = the frame's codepoint; lengths saturate at
    // IPv4's 64 KiB for the rare larger virtual frames (scheme bursts)
    const ip = ETH;
    data[ip] = 0x45;
    data[ip + 1] = ((flags & 7) << 5) | ((flags >> 3) & 3);
    data.writeUInt16BE(Math.min(wireLen - ETH, 0xffff), ip + 2);
    data.writeUInt16BE(dcemu.readUInt32BE(DcemuHeader.seq) & 0xffff, ip + 4);
    data.writeUInt16BE(0x4000, ip + 6);
    data[ip + 8] = 64;
    data[ip + 9] = 17;
    this.address(dcemu.readUInt16BE(DcemuHeader.src)).copy(data, ip + 12);
    this.address(dcemu.readUInt16BE(DcemuHeader.dst)).copy(data, ip + 16);
    data.writeUInt16BE(ipChecksum(data, ip), ip + 10);
    // UDP, checksum 0 (none, as IPv4 allows)
    const udp = ip + IPV4;
    data.writeUInt16BE(DCEMU_UDP_PORT, udp);
    data.writeUInt16BE(DCEMU_UDP_PORT, udp + 2);
    data.writeUInt16BE(Math.min(wireLen - ETH - IPV4, 0xffff), udp + 4);
    // dcemu header and as much of its extension as the frame's size and the snap length leave room for
    const extKept = dcemu.length - DcemuHeader.bytes;
    const room = data.length - PACKET_HEADERS;
    dcemu.copy(data, udp + UDP, 0, DcemuHeader.bytes + Math.min(extKept, room));
    const fate = (flags >> 5) & 3;
    return enhancedPacket({
      interfaceId: 0,
      tsNs,
      origLen: wireLen,
      data,
      flags: EpbFlags.Outbound | (fate === CaptureFate.Corrupted ? EpbFlags.CrcError : 0),
      ...(dcemu[DcemuHeader.extLength] > room && { comment: extensionComment(dcemu) }),
    });
  }

  private address(id: number): Buffer {
    return this.ipOf[id] ?? Buffer.from([198, 18, (id >> 8) & 0xff, id & 0xff]);
  }

  private fail(message: string): void {
    if (this.failed) return;
    this.failed = true;
    for (const nc of this.nodes.values()) for (const pf of nc.files) pf.pending.length = 0;
    this.onError(message);
  }

  /**
   * Ends every file with its interface statistics (frames the port sent, frames past the limit) at
   * fabric time `tsNs`, closes them and says what was written. Idempotent.
   */
  close(tsNs: number): CaptureFileSummary[] {
    if (this.closed) return this.closed;
    const out: CaptureFileSummary[] = [];
    for (const nc of this.nodes.values()) {
      for (const pf of nc.files) {
        const s = pf.summary;
        try {
          if (!this.failed)
            writeSync(
              pf.fd,
              interfaceStatistics({
                interfaceId: 0,
                tsNs,
                received: s.frames + s.dropped,
                dropped: s.dropped,
              }),
            );
        } catch (err) {
          this.fail(`capture: cannot write to ${this.dir}: ${(err as Error).message}`);
        }
        closeSync(pf.fd);
        out.push(s);
      }
    }
    this.closed = out;
    return out;
  }
}

/** Locally administered MAC 02:dc:00:00:<id>: one per node. */
function mac(id: number): Buffer {
  return Buffer.from([0x02, 0xdc, 0, 0, (id >> 8) & 0xff, id & 0xff]);
}

/** The IPv4 header checksum (RFC 791): ones' complement of the ones' complement sum of its words. */
export function ipChecksum(b: Buffer, at: number): number {
  let sum = 0;
  for (let i = 0; i < IPV4; i += 2) if (i !== 10) sum += b.readUInt16BE(at + i);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/** JSON for what msgpack may decode to: 64-bit integers as text. */
const plain = (_key: string, v: unknown): unknown => (typeof v === 'bigint' ? v.toString() : v);

/** The packet comment for a frame whose route or scheme header does not fit in its captured bytes. */
function extensionComment(dcemu: Buffer): string {
  const kept = dcemu.subarray(DcemuHeader.bytes);
  if (kept.length === 0) return 'dcemu: route and scheme header longer than the capture keeps';
  let r: unknown;
  let x: unknown;
  try {
    [r, x] = unpack(kept) as [unknown, unknown];
  } catch {
    return `dcemu: route and scheme header of ${kept.length} bytes (undecodable)`;
  }
  const parts: string[] = [];
  if (r !== null && r !== undefined) parts.push(`route=${JSON.stringify(r, plain)}`);
  if (x !== null && x !== undefined) parts.push(`hdr=${JSON.stringify(x, plain)}`);
  return `dcemu: ${parts.join(' ')}`;
}
