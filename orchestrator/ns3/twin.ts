/**
 * The ns-3 twin of a dcemu run (tools/ns3/twin.cc, docs/ns3.md): its input written from what a run's
 * results folder holds (topology.json, scenario.json, flows.csv), the program built once against the
 * system's ns-3 (Debian's libns3-dev) and run, and what it writes read back in dcemu's formats.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { packageRoot } from '../../core/paths.js';
import { RuntimeError } from '../engine/errors.js';

/** the ns-3 modules the twin links */
const NS3_LIBS = ['core', 'network', 'internet', 'point-to-point', 'traffic-control', 'applications'];

/** Why the twin cannot be built here (no ns-3 headers, no g++), or null when it can. */
export function ns3Missing(): string | null {
  if (!existsSync('/usr/include/ns3/core-module.h'))
    return 'ns-3 is not installed (apt-get install libns3-dev g++: ns-3 3.37 on Debian 12)';
  return null;
}

let built: Promise<string> | null = null;

/**
 * The twin's binary, built with g++ on first use into a cache named by its source's hash (a few tens
 * of seconds; later runs reuse it).
 */
export function twinBinary(): Promise<string> {
  built ??= (async () => {
    const src = join(packageRoot(), 'tools', 'ns3', 'twin.cc');
    const hash = createHash('sha256').update(readFileSync(src)).digest('hex').slice(0, 12);
    const dir = join(tmpdir(), 'dcemu-ns3');
    const bin = join(dir, `twin-${hash}`);
    if (existsSync(bin)) return bin;
    mkdirSync(dir, { recursive: true });
    const tmp = `${bin}.${process.pid}.tmp`;
    // headers from the system include path as `ns3/...` (adding -I/usr/include/ns3 would shadow libc's
    // string.h with ns-3's own)
    const r = await execa(
      'g++',
      ['-O2', '-std=c++17', '-o', tmp, src, ...NS3_LIBS.map((l) => `-lns3-${l}`)],
      {
        reject: false,
      },
    );
    if (r.exitCode !== 0)
      throw new RuntimeError(
        `cannot build the ns-3 twin (g++ ${src}): ${r.stderr.split('\n').slice(0, 5).join(' ')}`,
      );
    renameSync(tmp, bin);
    return bin;
  })();
  return built;
}

interface TopologyJson {
  nodes: Array<{ name: string; role: string }>;
  links: Array<{
    a: { node: string; port: number };
    b: { node: string; port: number };
    rateBps: number;
    propNs: number;
  }>;
}

interface ScenarioJson {
  seed: number;
  ports: { bufferBytes: number; ecnBytes: number; hostBufferBytes: number; hostEcnBytes?: number };
  transport: {
    kind: string;
    cc?: string;
    initCwnd?: number;
    g?: number;
    minRtoNs?: number;
    dupAcks?: number;
    rwndBytes?: number;
  };
  run: { sampleNs: number };
  /** absent in a run from before the host stack was modelled: no limits, strict priority */
  host?: { qdisc: string; sendBufferBytes: number; smallQueueBytes: number; cwndValidation: boolean };
}

/** ns-3 settings a cross-check changes to find what makes a difference (tools/ns3/twin.cc, `option`) */
export type TwinOptions = Partial<
  Record<
    | 'delack'
    | 'device-queue'
    | 'rate-scale'
    | 'limited-transmit'
    | 'ecn-offset'
    | 'sack'
    | 'recovery'
    | 'first-rto'
    | 'dctcp-floor'
    | 'window'
    | 'sndbuf',
    string
  >
>;

/**
 * The twin's input for the run in `results`: its fabric, settings and flows (every flow the run
 * started, at its start); `endNs`: how long ns-3 runs, virtual ns from the traffic start.
 */
export function twinInput(results: string, endNs: number, options: TwinOptions = {}): string {
  const topo = JSON.parse(readFileSync(join(results, 'topology.json'), 'utf8')) as TopologyJson;
  const sc = JSON.parse(readFileSync(join(results, 'scenario.json'), 'utf8')) as ScenarioJson;
  const t = sc.transport;
  const h = sc.host ?? { qdisc: 'prio', sendBufferBytes: 0, smallQueueBytes: 0, cwndValidation: false };
  if (t.kind !== 'baseline')
    throw new RuntimeError(`ns-3 twin: transport '${t.kind}' has no twin (the baseline transport only)`);
  const lines = [
    `# ns-3 twin input of ${results}`,
    `seed ${sc.seed}`,
    `end_ns ${Math.round(endNs)}`,
    `sample_ns ${sc.run.sampleNs}`,
    `tcp ${t.cc} ${t.initCwnd} ${t.g} ${t.minRtoNs} ${t.dupAcks} 1460`,
    `rwnd ${t.rwndBytes ?? 0}`,
    `host ${h.qdisc} ${h.sendBufferBytes} ${h.smallQueueBytes} ${h.cwndValidation ? 1 : 0}`,
  ];
  const role = new Map(topo.nodes.map((n) => [n.name, n.role === 'host' ? 'host' : 'switch']));
  for (const n of topo.nodes) lines.push(`node ${n.name} ${role.get(n.name)}`);
  for (const l of topo.links) {
    lines.push(`link ${l.a.node} ${l.a.port} ${l.b.node} ${l.b.port} ${l.rateBps} ${l.propNs}`);
    for (const end of [l.a, l.b]) {
      const host = role.get(end.node) === 'host';
      // hosts' NIC queues as dcemu's: deep, marking only where the scenario says (ports.hostEcnThreshold)
      const ecn = t.cc !== 'dctcp' ? 0 : host ? (sc.ports.hostEcnBytes ?? 0) : sc.ports.ecnBytes;
      lines.push(
        `egress ${end.node} ${end.port} ${host ? sc.ports.hostBufferBytes : sc.ports.bufferBytes} ${ecn}`,
      );
    }
  }
  for (const f of readFlows(join(results, 'flows.csv')))
    lines.push(`flow ${f.id} ${f.src} ${f.dst} ${f.size} ${f.startNs}`);
  for (const [k, v] of Object.entries(options)) lines.push(`option ${k} ${v}`);
  return `${lines.join('\n')}\n`;
}

export interface FlowResult {
  id: number;
  src: string;
  dst: string;
  size: number;
  startNs: number;
  /** FCT, ns; null: not completed */
  fctNs: number | null;
  retransmits: number;
  timeouts: number;
  /**
   * payload bytes of every data segment that reached the receiver, in order or not (the twin's
   * flows.csv; dcemu's has none: 0)
   */
  arrived: number;
}

/** Flows from a flows.csv, dcemu's or the twin's (the columns both have). */
export function readFlows(file: string): FlowResult[] {
  const [head, ...rows] = readFileSync(file, 'utf8').trim().split('\n');
  const col = new Map(head.split(',').map((c, i) => [c, i]));
  const at = (r: string[], c: string) => r[col.get(c) ?? -1] ?? '';
  return rows.map((line) => {
    const r = line.split(',');
    // dcemu writes -1 for a flow that did not complete, the twin nothing
    const fct = at(r, 'fct_ns');
    return {
      id: Number(at(r, 'id')),
      src: at(r, 'src'),
      dst: at(r, 'dst'),
      size: Number(at(r, 'size')),
      startNs: Number(at(r, 'start_ns')),
      fctNs: fct === '' || Number(fct) < 0 ? null : Number(fct),
      retransmits: Number(at(r, 'retransmits') || 0),
      timeouts: Number(at(r, 'timeouts') || 0),
      arrived: Number(at(r, 'arrived') || 0),
    };
  });
}

/** One port's queue samples from a queues.csv, in time order: when (ns) and how many bytes. */
export function readQueue(file: string, node: string, port: number): Array<{ tNs: number; bytes: number }> {
  const out: Array<{ tNs: number; bytes: number }> = [];
  for (const line of readFileSync(file, 'utf8').trim().split('\n').slice(1)) {
    const [n, p, , t, bytes] = line.split(',');
    if (n === node && Number(p) === port) out.push({ tNs: Number(t), bytes: Number(bytes) });
  }
  return out;
}

export interface TwinRun {
  dir: string;
  flows: FlowResult[];
  /** per port: ECN marks, drops, packets sent */
  ports: Array<{ node: string; port: number; peer: string; marks: number; drops: number; tx: number }>;
  /** what the twin said it could not match */
  differs: string[];
}

/** Runs the twin of the run in `results` into `dir`. */
export async function runTwin(
  results: string,
  dir: string,
  endNs: number,
  options: TwinOptions = {},
): Promise<TwinRun> {
  const bin = await twinBinary();
  mkdirSync(dir, { recursive: true });
  const input = join(dir, 'twin-input.txt');
  writeFileSync(input, twinInput(results, endNs, options));
  const r = await execa(bin, [input, dir], { reject: false });
  if (r.exitCode !== 0)
    throw new RuntimeError(`ns-3 twin failed (${bin} ${input}): ${r.stderr.trim().split('\n').at(-1)}`);
  const differs = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('twin: differs: '))
    .map((l) => l.slice('twin: differs: '.length));
  const ports = readFileSync(join(dir, 'ports.csv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const [node, port, peer, marks, drops, tx] = line.split(',');
      return { node, port: Number(port), peer, marks: Number(marks), drops: Number(drops), tx: Number(tx) };
    });
  return { dir, flows: readFlows(join(dir, 'flows.csv')), ports, differs };
}
