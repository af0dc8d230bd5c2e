/**
 * The host role: a NIC (port 0), a transport, and the workload's flows for this host, each started
 * at its offset from the traffic start. It keeps the per-flow records the orchestrator merges:
 * start and retransmissions on the sending side, finish and path on the receiving side.
 */
import type { Frame } from '../core/frame.js';
import type { FlowRecord, FlowSpec } from '../core/messages.js';
import type { NodeContext, Role } from '../core/node-runtime.js';
import type { Timer } from '../core/scheduler.js';
import { BASELINE_DEFAULTS, createTransport, type Transport } from './transport/index.js';

export class Host implements Role {
  private readonly transport: Transport;
  private readonly flows: FlowSpec[];
  private readonly started = new Map<number, number>();
  private readonly received: Array<[number, number, number[]]> = [];
  private readonly timers: Timer[] = [];
  private ackedCount = 0;
  /** latest arrival handled: frames reach a host over one link, so an earlier one arrived too late */
  private lastArrival = 0;

  constructor(private readonly ctx: NodeContext) {
    const cfg = ctx.config;
    const nic = ctx.ports[0];
    if (!nic) throw new Error(`host ${cfg.name}: no NIC port in config`);
    this.transport = createTransport(cfg.transport ?? BASELINE_DEFAULTS, {
      hostId: cfg.id,
      clock: ctx.clock,
      nic,
      metrics: ctx.metrics,
      delivered: (id, now, via) => this.received.push([id, now, via.slice()]),
      acked: () => this.ackedCount++,
    });
    this.flows = (cfg.flows ?? []).filter((f) => f.src === cfg.id);
  }

  start(at: number): void {
    for (const f of this.flows) this.timers.push(this.ctx.clock.at(at + f.start, this.startFlow, f));
  }

  private readonly startFlow = (now: number, f: FlowSpec): void => {
    this.started.set(f.id, now);
    this.transport.startFlow(f, now);
  };

  onFrame(now: number, _port: number, frame: Frame): void {
    if (frame.d !== this.ctx.config.id) {
      this.ctx.metrics.inc('misdelivered');
      return;
    }
    if (now < this.lastArrival) this.ctx.sched.fidelity.causalityMisses++;
    else this.lastArrival = now;
    this.transport.onFrame(frame, now);
  }

  portDown(): void {}
  portUp(): void {}

  progress(): { flowsDone: number; flowsStarted: number } {
    return { flowsDone: this.received.length, flowsStarted: this.started.size };
  }

  report() {
    const flows: FlowRecord[] = [];
    for (const f of this.flows) {
      const start = this.started.get(f.id);
      if (start === undefined) continue;
      const s = this.transport.senderStats(f.id);
      flows.push({
        id: f.id,
        src: f.src,
        dst: f.dst,
        size: f.size,
        start,
        finish: -1,
        retransmits: s?.retransmits ?? 0,
        timeouts: s?.timeouts ?? 0,
        via: [],
      });
    }
    this.ctx.metrics.inc('flowsAcked', this.ackedCount);
    return { flows, received: this.received, queues: [], queueHist: null };
  }

  stop(): void {
    for (const t of this.timers) this.ctx.clock.cancel(t);
    this.transport.stop();
  }
}
