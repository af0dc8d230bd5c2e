/**
 * The control channel between the orchestrator and every node process (DESIGN §3): one TCP
 * connection per node carrying a stream of msgpack messages (msgpack values are self-delimiting, so
 * the stream needs no extra framing). TCP makes it reliable and ordered; the node treats the loss of
 * this connection as the end of its run and shuts itself down, so nothing outlives its orchestrator.
 */
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { PackrStream, UnpackrStream } from 'msgpackr';
import type { ControlMessage, NodeMessage } from './messages.js';

/** One node's end: connects, says hello, then exchanges messages until either side closes. */
export class ControlClient extends EventEmitter<{ message: [ControlMessage]; close: [] }> {
  private readonly out = new PackrStream({ useRecords: false });
  private closed = false;

  private constructor(private readonly socket: net.Socket) {
    super();
    const inp = new UnpackrStream({ useRecords: false });
    socket.setNoDelay(true);
    this.out.pipe(socket);
    socket.pipe(inp);
    inp.on('data', (m: ControlMessage) => this.emit('message', m));
    inp.on('error', () => socket.destroy());
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      this.emit('close');
    });
  }

  static connect(host: string, port: number, name: string): Promise<ControlClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port }, () => {
        socket.off('error', reject);
        const c = new ControlClient(socket);
        c.send({ type: 'hello', name, pid: process.pid });
        resolve(c);
      });
      socket.once('error', reject);
    });
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

  constructor(
    readonly name: string,
    readonly pid: number,
    private readonly socket: net.Socket,
    inp: UnpackrStream,
  ) {
    super();
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
}

/** The orchestrator's end: accepts node connections and hands each over once it said hello. */
export class ControlServer extends EventEmitter<{ connection: [ControlConnection] }> {
  private readonly server = net.createServer((socket) => this.accept(socket));
  private readonly sockets = new Set<net.Socket>();

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
    inp.on('error', () => socket.destroy());
    inp.once('data', (hello: NodeMessage) => {
      if (hello?.type !== 'hello') {
        socket.destroy();
        return;
      }
      const conn = new ControlConnection(hello.name, hello.pid, socket, inp);
      this.emit('connection', conn);
    });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
