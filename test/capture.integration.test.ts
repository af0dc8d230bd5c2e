/**
 * Packet capture end to end (`run.capture`): real node processes ship their captured frames to the
 * orchestrator, which writes one pcapng per egress port. In conservative mode the capture is exact:
 * every frame the port sent (its counter), stamped at the fabric time its serialization started. tshark
 * reads every file, and with tools/dcemu.lua decodes the dcemu header. Outside CI the tshark checks skip,
 * saying so, when tshark is not installed. The docker runtime's captures: the user's-scheme run in
 * test/containers/docker.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DcemuHeader } from '../core/capture.js';
import { dcemu, ownNodePids, ROOT, readJson, tempOut } from './helpers.js';
import { option, type PcapngPacket, readPcapng } from './pcapng-reader.js';

const FIXTURE = 'test/fixtures/capture.yaml';
const LUA = join(ROOT, 'tools/dcemu.lua');

async function answers(cmd: string, args: string[]): Promise<boolean> {
  const r = await execa(cmd, args, { reject: false, timeout: 15_000 });
  return r.exitCode === 0;
}
const inCi = process.env.CI === 'true';
const tshark = await answers('tshark', ['--version']);
if (!tshark && !inCi)
  console.warn('capture.integration: tshark is not installed: tshark checks skipped (they run in CI)');

afterEach(async () => {
  const left = await ownNodePids();
  for (const pid of left) process.kill(pid, 'SIGKILL');
  expect(left).toEqual([]);
});

interface PortRow {
  index: number;
  peer: string;
  txFrames: number;
  txBytes: number;
}

/** The dcemu header of a captured packet (after Ethernet 14 + IPv4 20 + UDP 8). */
function header(p: PcapngPacket) {
  const h = p.data.subarray(42);
  return {
    kind: h[DcemuHeader.kind],
    ecn: (h[DcemuHeader.flags] >> 3) & 3,
    fate: h[DcemuHeader.flags] >> 5,
    src: h.readUInt16BE(DcemuHeader.src),
    flow: h.readUInt32BE(DcemuHeader.flow),
    seq: h.readUInt32BE(DcemuHeader.seq),
    size: h.readUInt32BE(DcemuHeader.size),
  };
}

const capture = (out: string, file: string) => readPcapng(readFileSync(join(out, 'capture', file)));
const txPort = (out: string, node: string, peer: string): PortRow =>
  readJson(join(out, 'nodes.json'))
    .find((n: { name: string }) => n.name === node)
    .ports.find((p: PortRow) => p.peer === peer);

const FILES = ['h0-sw0.pcapng', 'h2-sw0.pcapng', 'sw0-h0.pcapng', 'sw0-h2.pcapng'];

describe('run.capture (process runtime)', () => {
  const out = tempOut('capture');
  beforeAll(async () => {
    const r = await dcemu(['run', FIXTURE, '--out', out, '-q']);
    expect(r.exitCode, r.stderr).toBe(0);
  });

  it('writes one pcapng per captured egress port with exactly the frames the port sent', () => {
    const s = readJson(join(out, 'summary.json'));
    // capture: [h0, [sw0, h2]]: h0's link and sw0 -- h2, both directions
    expect(s.capture.map((c: { file: string }) => c.file)).toEqual(FILES.map((f) => `capture/${f}`));
    // exact, and the same as each port's own counters
    expect(s.capture.map((c: { frames: number }) => c.frames)).toEqual([28, 44, 25, 46]);
    for (const c of s.capture) {
      const p = capture(out, c.file.replace('capture/', ''));
      const tx = txPort(out, c.node, c.peer);
      expect(tx.index).toBe(c.port);
      expect(p.packets.length, c.file).toBe(tx.txFrames);
      expect(c.dropped).toBe(0);
      // bytes on the wire: the frames' virtual sizes (none here is below the 64-byte minimum)
      expect(
        p.packets.reduce((n, x) => n + x.origLen, 0),
        c.file,
      ).toBe(tx.txBytes);
      for (const x of p.packets) expect(header(x).size).toBe(x.origLen);
      // the interface statistics say the same: every frame sent, none left out
      expect(option(p.stats[0].options, 4)?.readBigUInt64LE()).toBe(BigInt(tx.txFrames));
      expect(option(p.stats[0].options, 7)?.readBigUInt64LE()).toBe(0n);
      // timestamps strictly increase: one transmission after another on a port
      for (let i = 1; i < p.packets.length; i++) expect(p.packets[i].ts).toBeGreaterThan(p.packets[i - 1].ts);
      expect(p.interfaces[0].snapLen).toBe(128);
    }
  });

  it('stamps every frame with the fabric time its serialization starts', () => {
    const sent = capture(out, 'h0-sw0.pcapng').packets.filter((p) => header(p).kind === 0);
    const fwd = capture(out, 'sw0-h2.pcapng').packets.filter((p) => header(p).kind === 0);
    // flow 1 starts at 5 µs (flows.csv start_ns): its first frame leaves h0 then, reaches sw0 after
    // 1500 B at 10 Gbit/s (1.2 µs) + 1 µs, and sw0 -> h2 is idle: it leaves sw0 at 7.2 µs
    const flows = readFileSync(join(out, 'flows.csv'), 'utf8').trim().split('\n').slice(1);
    expect(flows[0].split(',').slice(0, 5)).toEqual(['1', 'h0', 'h2', '30000', '5000']);
    expect(sent[0].ts).toBe(5000);
    expect(header(sent[0])).toMatchObject({ flow: 1, seq: 0, size: 1500 });
    expect(fwd[0].ts).toBe(7200);
    expect(header(fwd[0])).toMatchObject({ src: 0, flow: 1, seq: 0 });
    // back to back at line rate while the window lasts
    expect(sent.slice(0, 5).map((p) => p.ts)).toEqual([5000, 6200, 7400, 8600, 9800]);
    // every frame of flow 1 leaves sw0 no earlier than its arrival there (store and forward)
    const leftH0 = new Map<number, number>();
    for (const p of sent) if (!leftH0.has(header(p).seq)) leftH0.set(header(p).seq, p.ts);
    for (const p of fwd.filter((x) => header(x).flow === 1))
      expect(p.ts).toBeGreaterThanOrEqual(leftH0.get(header(p).seq)! + 2200);
    // the incast queues at sw0 -> h2 and marks ECN: 27 frames carry CE there
    expect(fwd.filter((p) => header(p).ecn === 3).length).toBe(27);
  });

  it('shows what the fault layer did to each frame: lost, corrupted (CRC error flag)', () => {
    const p = capture(out, 'sw0-h2.pcapng').packets;
    const fates = p.map(header).filter((h) => h.fate !== 0);
    expect(fates).toEqual([
      expect.objectContaining({ fate: 2, flow: 2, seq: 8 }),
      expect.objectContaining({ fate: 3, flow: 1, seq: 15 }),
    ]);
    const sw0 = readJson(join(out, 'nodes.json')).find((n: { name: string }) => n.name === 'sw0');
    expect([sw0.counters.dropsWireLoss, sw0.counters.wireCorrupted]).toEqual([1, 1]);
    const crc = p.filter((x) => (option(x.options, 2)!.readUInt32LE() & (1 << 24)) !== 0);
    expect(crc.map((x) => header(x).fate)).toEqual([3]);
  });

  it.skipIf(!tshark && !inCi)(
    'tshark reads every file, and decodes the dcemu header with tools/dcemu.lua',
    async () => {
      const lua = ['-X', `lua_script:${LUA}`];
      // without the dissector: plain Ethernet/IPv4/UDP to port 47100
      const plainFile = join(out, 'capture/h0-sw0.pcapng');
      const plain = await execa('tshark', [
        '-r',
        plainFile,
        '-T',
        'fields',
        '-e',
        'frame.len',
        '-e',
        'ip.src',
        '-e',
        'udp.dstport',
      ]);
      expect(
        plain.stdout
          .trim()
          .split('\n')
          .map((l) => l.split('\t')),
      ).toEqual(
        // everything h0 sends comes from h0's address
        capture(out, 'h0-sw0.pcapng').packets.map((x) => [String(x.origLen), '198.18.0.10', '47100']),
      );
      const fields = [
        'frame.time_epoch',
        'frame.len',
        'dcemu.kind',
        'dcemu.flow',
        'dcemu.seq',
        'dcemu.size',
        'dcemu.ecn',
        'dcemu.fate',
        'frame.comment',
        '_ws.expert.severity',
      ];
      for (const f of FILES) {
        const p = capture(out, f);
        const dec = await execa('tshark', [
          ...lua,
          '-r',
          join(out, 'capture', f),
          '-T',
          'fields',
          ...fields.flatMap((x) => ['-e', x]),
        ]);
        expect(dec.stderr).not.toMatch(/Lua: Error|error/i);
        // (the last fields of a line may be empty: keep its tabs)
        const rows = dec.stdout
          .replace(/\n$/, '')
          .split('\n')
          .map((l) => l.split('\t'));
        expect(rows.length, f).toBe(p.packets.length);
        for (const [i, x] of p.packets.entries()) {
          const h = header(x);
          const [epoch, len, kind, flow, seq, size, ecn, fate, comment, severity] = rows[i];
          // fabric time: tshark's epoch time is the virtual time since traffic start
          expect([epoch, len, kind, flow, seq, size, ecn, fate]).toEqual(
            [(x.ts / 1e9).toFixed(9), x.origLen, h.kind, h.flow, h.seq, h.size, h.ecn, h.fate].map(String),
          );
          // a 64-byte ack has no room for its transport header (the ECN echo): the packet comment holds it
          if (h.kind === 1) expect(comment).toMatch(/^dcemu: hdr=[01]$/);
          if (h.kind === 0) expect(comment).toBe('');
          // nothing malformed, no warning or error: only comments and notes
          for (const sev of severity.split(',').filter(Boolean))
            expect(Number(sev), f).toBeLessThan(0x600000);
        }
      }
      const line = await execa('tshark', [
        ...lua,
        '-r',
        join(out, 'capture/sw0-h2.pcapng'),
        '-Y',
        'dcemu.fate == 3',
      ]);
      expect(line.stdout).toMatch(
        /^\s*28 0\.000038400 +198\.18\.0\.10 → 198\.18\.0\.12 +DCEMU 1500 data 0 -> 2 flow 1 seq 15 size 1500 \[CE\] \[corrupted on the wire\] hdr=30000$/,
      );
    },
  );

  it('a node killed by the timeline has shipped its capture up to its halt time', async () => {
    const killed = tempOut('capture-kill');
    const scenario = join(killed, 'kill.yaml');
    writeFileSync(
      scenario,
      `${readFileSync(join(ROOT, FIXTURE), 'utf8')}  - { at: 30us, action: kill, node: h0 }\n`,
    );
    const r = await dcemu(['run', scenario, '--out', killed, '-q']);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(killed, 'summary.json'));
    // its report came at the kill: it counts exactly the frames it shipped
    expect(s.processes.missingReports).toEqual([]);
    const h0 = readJson(join(killed, 'nodes.json')).find((n: { name: string }) => n.name === 'h0');
    expect(h0.haltedAt).toBe(30_000);
    const cut = capture(killed, 'h0-sw0.pcapng').packets;
    expect(h0.ports[0].txFrames).toBe(cut.length);
    const full = capture(out, 'h0-sw0.pcapng').packets;
    // exact: the same frames as the run without the kill, up to the kill (and what was committed)
    expect(cut.length).toBeGreaterThanOrEqual(full.filter((p) => p.ts < 30_000).length);
    expect(cut.length).toBeLessThan(full.length);
    expect(cut.map((p) => p.data)).toEqual(full.slice(0, cut.length).map((p) => p.data));
    expect(cut.map((p) => p.ts)).toEqual(full.slice(0, cut.length).map((p) => p.ts));
    expect(cut.at(-1)!.ts).toBeLessThan(30_000 + 2_000);
  });

  it('dilated mode: the frames each port sent, up to run.captureLimit, the rest counted', async () => {
    const dil = tempOut('capture-dilated');
    // the machine may be busy: the counts hold whatever the fidelity
    const r = await dcemu([
      'run',
      FIXTURE,
      '--out',
      dil,
      '-q',
      '--sync',
      'dilated',
      '--tdf',
      '10000',
      '--allow-unfaithful',
      '--set',
      'run.captureLimit=30',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(dil, 'summary.json'));
    expect(s.capture.length).toBe(4);
    let cut = 0;
    for (const c of s.capture) {
      const p = capture(dil, c.file.replace('capture/', ''));
      const tx = txPort(dil, c.node, c.peer).txFrames;
      expect(p.packets.length, c.file).toBe(Math.min(30, tx));
      expect(c.frames).toBe(p.packets.length);
      expect(c.dropped, c.file).toBe(tx - p.packets.length);
      expect(option(p.stats[0].options, 4)?.readBigUInt64LE()).toBe(BigInt(tx));
      expect(option(p.stats[0].options, 7)?.readBigUInt64LE()).toBe(BigInt(c.dropped));
      for (let i = 1; i < p.packets.length; i++) expect(p.packets[i].ts).toBeGreaterThan(p.packets[i - 1].ts);
      cut += c.dropped;
    }
    expect(cut).toBeGreaterThan(0);
  });
});
