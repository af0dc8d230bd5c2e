/**
 * The control channel between the orchestrator and every node process (docs/architecture.md): one TCP
 * connection per node carrying a stream of msgpack messages (msgpack values are self-delimiting, so
 * the stream needs no extra framing). TCP makes it reliable and ordered; the node treats the loss of
 * this connection as the end of its run and shuts itself down, so nothing outlives its orchestrator.
 *
 * Only the run's own nodes are admitted (core/auth.ts, docs/security.md). The orchestrator opens with
 * a fresh challenge; the node answers with a hello naming itself, an HMAC of the challenge under its
 * key, and a challenge of its own; the orchestrator answers that in its welcome, so a node does not
 * take its configuration from a stranger either. A connection that fails the proof, names no planned
 * node or says nothing within HELLO_WAIT_MS is told so, closed and reported (`refused`).
 */
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { PackrStream, UnpackrStream } from 'msgpackr';
import { newChallenge, proof, proves } from './auth.js';
import type { ControlMessage, NodeMessage } from './messages.js';

/** how long a new connection has to prove itself, real ms */
export const HELLO_WAIT_MS = 10_000;
/** bytes a connection may send before it is admitted (a hello is ~120): more is not a node */
const HELLO_MAX_BYTES = 4096;

/** the orchestrator's side of the proof: it answers the node's challenge under the same key */
const ORCHESTRATOR = 'orchestrator\0';

/** where a connection comes from: address:port */
function peerOf(socket: net.Socket): string {
  return `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
}

/** The orchestrator turned the connection away, or did not prove itself: the node is not admitted. */
export class RefusedError extends Error {}

/** One node's end: connects, says hello, then exchanges messages until either side closes. */
export class ControlClient extends EventEmitter<{ message: [ControlMessage]; close: [] }> {
  private readonly out = new PackrStream({ useRecords: false });
  private closed = false;
  /** while admission is under way, each message goes here */
  private gate: ((m: ControlMessage) => void) | null = null;
  /**
   * messages after the welcome (the config follows it at once), kept until someone listens; null
   * once handed over
   */
  private held: ControlMessage[] | null = [];

  private constructor(private readonly socket: net.Socket) {
    super();
    const inp = new UnpackrStream({ useRecords: false });
    socket.setNoDelay(true);
    this.out.pipe(socket);
    socket.pipe(inp);
    inp.on('data', (m: ControlMessage) => {
      if (this.gate) this.gate(m);
      else if (this.held) this.held.push(m);
      else this.emit('message', m);
    });

    inp.on('error', () => socket.destroy());
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      this.emit('close');
    });
  }

  /**
   * Connects, proves to be node `name` with `key` and checks the orchestrator's own proof; resolves
   * once admitted. A refusal, or an orchestrator that does not prove itself, rejects with RefusedError.
   */
  static connect(host: string, port: number, name: string, key: Buffer): Promise<ControlClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port }, () => {
        socket.off('error', reject);
        const c = new ControlClient(socket);
        const mine = newChallenge();
        const fail = (why: string) => {
          socket.destroy();
          reject(new RefusedError(why));
        };
        const closed = () => fail('the orchestrator closed the connection before admitting this node');
        socket.once('close', closed);
        const step = (m: ControlMessage) => {
          if (m?.type === 'challenge' && m.nonce instanceof Uint8Array) {
            const answer = proof(key, Buffer.from(m.nonce), name);
            c.send({ type: 'hello', name, pid: process.pid, proof: answer, nonce: mine });
            c.gate = admitted;
          } else fail('the orchestrator did not open with a challenge');
        };
        const admitted = (m: ControlMessage) => {
          c.gate = null;
          socket.off('close', closed);
          if (m?.type === 'refused') fail(`the orchestrator refused this node: ${m.reason}`);
          else if (m?.type !== 'welcome' || !proves(key, mine, ORCHESTRATOR + name, m.proof))
            fail("the orchestrator did not prove that it holds this run's secret");
          else resolve(c);
        };
        c.gate = step;
      });
      socket.once('error', reject);
    });
  }

  /** Takes the messages from the orchestrator: those that came with the welcome first, in order. */
  onMessage(handler: (m: ControlMessage) => void): void {
    this.on('message', handler);
    const held = this.held ?? [];
    this.held = null;
    for (const m of held) this.emit('message', m);
  }

  send(msg: NodeMessage): void {
    if (!this.closed) this.out.write(msg);
  }

  /** Sends a last message and waits until the kernel has it. */
  async sendAndFlush(msg: NodeMessage): Promise<void> {
    if (this.closed) return;
    this.out.write(msg);
    await new Promise<void>((resolve) => {
      if (this.socket.writableNeedDrain) this.socket.once('drain', () => resolve());
      else setImmediate(resolve);
    });
  }

  /** Ends the connection; resolves once the other side has read everything and closed its end too. */
  close(): Promise<void> {
    this.closed = true;
    if (this.socket.closed) return Promise.resolve();
    const gone = new Promise<void>((resolve) => this.socket.once('close', () => resolve()));
    this.socket.end();
    return gone;
  }
}

/** A node's connection as the orchestrator sees it. */
export class ControlConnection extends EventEmitter<{ message: [NodeMessage]; close: [] }> {
  private readonly out = new PackrStream({ useRecords: false });
  closed = false;

  /** where it came from: address:port */
  readonly peer: string;

  constructor(
    readonly name: string,
    readonly pid: number,
    private readonly socket: net.Socket,
    inp: UnpackrStream,
  ) {
    super();
    this.peer = peerOf(socket);
    this.out.pipe(socket);
    inp.on('data', (m: NodeMessage) => this.emit('message', m));
    socket.on('close', () => {
      this.closed = true;
      this.emit('close');
    });
  }

  send(msg: ControlMessage): void {
    if (!this.closed) this.out.write(msg);
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** Tells the node why it is turned away (a proven node the run does not want now) and closes. */
  refuse(reason: string): void {
    this.send({ type: 'refused', reason });
    this.closed = true;
    this.out.end();
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }
}

/** A connection the control server turned away. */
export interface Refusal {
  /** where it came from: address:port */
  peer: string;
  /** the node it named, if it named one */
  name?: string;
  reason: string;
}

/**
 * The orchestrator's end: accepts node connections and hands each over once it proved to be a node of
 * the run. `keyFor(name)` is that node's key, or undefined for a name the run did not plan.
 */
export class ControlServer extends EventEmitter<{ connection: [ControlConnection]; refused: [Refusal] }> {
  private readonly server = net.createServer((socket) => this.accept(socket));
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly keyFor: (name: string) => Buffer | undefined) {
    super();
  }

  /** Tells `socket` why it is turned away, closes it and reports it. */
  refuse(socket: net.Socket, reason: string, name?: string): void {
    const peer = peerOf(socket);
    const out = new PackrStream({ useRecords: false });
    out.pipe(socket);
    out.end({ type: 'refused', reason } satisfies ControlMessage);
    setTimeout(() => socket.destroy(), 1000).unref();
    this.emit('refused', { peer, ...(name !== undefined && { name }), reason });
  }

  /** Listens on `host:port` (port 0: any free port) and returns the port. */
  async listen(host: string, port = 0): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve());
    });
    return (this.server.address() as net.AddressInfo).port;
  }

  private accept(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('error', () => {});
    socket.on('close', () => this.sockets.delete(socket));
    const inp = new UnpackrStream({ useRecords: false });
    socket.pipe(inp);
    const challenge = newChallenge();
    const opening = new PackrStream({ useRecords: false });
    opening.pipe(socket, { end: false });
    opening.end({ type: 'challenge', nonce: challenge } satisfies ControlMessage);
    // the connection's first answer decides it, once: a hello, or why it is turned away
    let answered = false;
    const settle = (): void => {
      answered = true;
      clearTimeout(silent);
      socket.off('data', count);
      socket.off('close', early);
    };
    const turnAway = (reason: string, name?: string): void => {
      settle();
      socket.unpipe(inp);
      this.refuse(socket, reason, name);
    };
    const silent = setTimeout(() => turnAway(`no hello within ${HELLO_WAIT_MS} ms`), HELLO_WAIT_MS);
    silent.unref();
    const early = (): void => {
      if (answered) return;
      settle();
      this.emit('refused', { peer: peerOf(socket), reason: 'closed before its hello' });
    };
    socket.once('close', early);
    let before = 0;
    const count = (chunk: Buffer): void => {
      before += chunk.length;
      if (!answered && before > HELLO_MAX_BYTES)
        turnAway(`more than ${HELLO_MAX_BYTES} bytes before its hello`);
    };
    socket.on('data', count);
    inp.on('error', () => (answered ? socket.destroy() : turnAway('not a msgpack stream')));
    inp.once('data', (hello: NodeMessage) => {
      if (answered) return;
      const name = hello?.type === 'hello' && typeof hello.name === 'string' ? hello.name : undefined;
      if (name === undefined) return turnAway('its first message is not a hello');
      const key = this.keyFor(name);
      const nonce = (hello as { nonce?: unknown }).nonce;
      if (key === undefined)
        return turnAway(`'${name.slice(0, 64)}' is not a node of this run`, name.slice(0, 64));
      if (!proves(key, challenge, name, (hello as { proof?: unknown }).proof))
        return turnAway('its proof is wrong', name.slice(0, 64));
      if (!(nonce instanceof Uint8Array && nonce.length === challenge.length))
        return turnAway('its hello carries no challenge', name.slice(0, 64));
      settle();
      const conn = new ControlConnection(name, Number((hello as { pid?: unknown }).pid) || 0, socket, inp);
      conn.send({
        type: 'welcome',
        proof: proof(key, Buffer.from(nonce), ORCHESTRATOR + name),
      });
      this.emit('connection', conn);
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
