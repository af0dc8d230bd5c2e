/**
 * One process of the bare datagram floor (bench/floor.ts): a node:dgram socket that answers every
 * datagram from its partner with one of its own, `rounds` times, as a dcemu node steps once per
 * datagram that wakes it. No decoding, no scheduling: what a datagram costs a Node process on this
 * machine before any of dcemu's work. Told its partner and its part over IPC; reports the CPU it spent
 * between the start and its last answer (start-up left out).
 */
import dgram from 'node:dgram';

/** the size of the datagrams exchanged, bytes: a link header with a frame or two, as most of dcemu's */
const SIZE = 96;

interface Start {
  peer: number;
  rounds: number;
  /** this one sends the first datagram */
  serve: boolean;
}

const sock = dgram.createSocket({
  type: 'udp4',
  recvBufferSize: 4 << 20,
  sendBufferSize: 4 << 20,
  // as core/endpoint.ts: peers are IP literals, no resolver round before each send
  lookup: (address, _family, cb) => (cb as (e: null, a: string, f: number) => void)(null, address, 4),
});
const buf = Buffer.alloc(SIZE, 0xdc);
let peer = 0;
let left = 0;
let cpu0: NodeJS.CpuUsage = process.cpuUsage();

function finish(): void {
  const d = process.cpuUsage(cpu0);
  process.send?.({ userUs: d.user, systemUs: d.system });
}

sock.on('message', () => {
  if (left <= 0) return;
  left--;
  sock.send(buf, peer, '127.0.0.1');
  if (left === 0) finish();
});
process.on('message', (m: Start) => {
  peer = m.peer;
  left = m.rounds;
  cpu0 = process.cpuUsage();
  if (m.serve) sock.send(buf, peer, '127.0.0.1');
});
process.on('disconnect', () => process.exit(0));
sock.bind(0, '127.0.0.1', () => process.send?.({ port: sock.address().port }));
