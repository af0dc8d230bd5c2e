/**
 * The host role: a NIC (port 0), a transport, and the workload's flows for this host, each started
 * at its offset from the traffic start. It keeps the per-flow records the orchestrator merges:
 * start, retransmissions and frames sent on the sending side, finish, path and (UDP) frames received
 * on the receiving side, and the data bytes its NIC delivered up, sampled every `run.sample` (the
 * fabric's delivered throughput over time, around faults). When the scenario models clocks, the host
 * also runs its PTP port, or records how its free clock drifts. With `host.stackDelay`, every frame
 * but PTP's crosses the kernel and NIC path on each side: handed down, it reaches the NIC's queue that
 * much later; arrived, it reaches the transport (or the scheme's host part) that much later. The
 * delivered bytes are counted where the NIC gets them.
 */
import { type Frame, FrameType } from '../core/frame.js';
import { InOrderLateness } from '../core/lateness.js';
import type { ClockSeries, FlowRecord, FlowSpec } from '../core/messages.js';
import { Series } from '../core/metrics.js';
import type { NodeContext, Role } from '../core/node-runtime.js';
import { newClockSeries, PtpPort, ptpStart, type SteerableClock } from '../core/ptp.js';
import { isStampedMessage } from '../core/ptp-messages.js';
import { draw, Rng } from '../core/random.js';
import type { Timer } from '../core/scheduler.js';
import { HostQdisc, TxLedger } from './qdisc/index.js';
import { BASELINE_DEFAULTS, createTransport, type Transport } from './transport/index.js';
import type { HostPart, Nic, TransportComponents } from './transport/types.js';

/** How often a free-running clock's true error is recorded (PTP runs use `ptp.sample`). */
const FREE_CLOCK_SAMPLE_NS = 10_000;

export class Host implements Role {
  private readonly transport: Transport;
  /** what each flow has in the qdisc and NIC, when the stack runs TCP small queues */
  private readonly ledger: TxLedger | null = null;
  /** the host's PTP port, when the scenario synchronizes clocks */
  private readonly ptp: PtpPort | null = null;
  /** without PTP, an emulated clock runs free: its true error is still recorded */
  private readonly freeClock: ClockSeries | null = null;
  private freeTimer: Timer | null = null;
  private readonly flows: FlowSpec[];
  private readonly started = new Map<number, number>();
  /** flows the application stopped before they were acknowledged: physical time */
  private readonly stopped = new Map<number, number>();
  private readonly received: Array<[number, number, number[]]> = [];
  private readonly timers: Timer[] = [];
  private ackedCount = 0;
  /** wire bytes of data frames addressed here, and their running total sampled every `sampleNs` */
  private rxDataBytes = 0;
  private readonly delivered = new Series();
  /** data bytes received per source, per `intervalNs` since the traffic start */
  private readonly bySource = new Map<number, number[]>();
  private trafficStart = 0;
  private sampler: Timer | null = null;
  /** the software stamp delay model (`jitter.stamp`): when PTP code gets to an arrived frame, in order */
  private readonly stampLate: InOrderLateness | null = null;
  /** `host.stackDelay`, ns: the kernel and NIC path a frame crosses on each side (0: none) */
  private readonly stackDelayNs: number;

  /** `part`: the scheme's host part, if the node runs one */
  constructor(
    private readonly ctx: NodeContext,
    part?: HostPart,
  ) {
    const cfg = ctx.config;
    const port = ctx.ports[0];
    if (!port) throw new Error(`host ${cfg.name}: no NIC port in config`);
    const sched = ctx.sched;
    this.stackDelayNs = cfg.host?.stackDelayNs ?? 0;
    // the transport works in node time; the port takes the physical time of the event being handled.
    // A constant delay keeps the frames' order; the NIC's verdict on a delayed frame comes too late to
    // return, so the send reports it taken (a drop still counts at the port).
    const nic: Nic = {
      send: (f: Frame) => {
        if (this.stackDelayNs === 0) return port.send(f, sched.current);
        sched.atHardware(sched.current + this.stackDelayNs, this.sendAfterStack, f);
        return true;
      },
      rateBps: port.params.rateBps,
      backlog: () => port.occupancy(sched.current),
    };
    // TCP small queues: the NIC's qdisc tells the ledger what each flow has in it and on the wire
    const stack = cfg.host;
    if (stack !== undefined && stack.smallQueueBytes > 0 && port.discipline instanceof HostQdisc) {
      this.ledger = port.discipline.accounting = new TxLedger(cfg.id, sched);
      Object.assign(nic, this.ledger.nicHooks());
    }
    const delivered = new Set<number>();
    const components: TransportComponents = {
      hostId: cfg.id,
      clock: ctx.clock,
      nic,
      ...(stack !== undefined && { stack }),
      metrics: ctx.metrics,
      // flow records are measurements: physical time, not the host's clock; a flow a scheme handed to
      // its best-effort transport after part of it arrived is delivered once
      delivered: (id, _now, via) => {
        if (delivered.has(id)) return;
        delivered.add(id);
        this.received.push([id, sched.current, via.slice()]);
      },
      acked: () => this.ackedCount++,
      physNow: () => sched.current,
      emit: (kind, fields) => ctx.emit(kind, sched.current, fields),
    };
    // the scheme's layer under the run's transport, or its transport over the run's, or the run's alone
    const run = (c: TransportComponents) => createTransport(cfg.transport ?? BASELINE_DEFAULTS, c);
    const schemeConfig = cfg.scheme?.config;
    if (part?.under) this.transport = part.under(schemeConfig, components, run);
    else if (part?.transport) this.transport = part.transport(schemeConfig, components, run(components));
    else this.transport = run(components);
    this.flows = (cfg.flows ?? []).filter((f) => f.src === cfg.id);
    if (cfg.ptp) {
      const ptp = this.ptpPort(port, cfg.ptp);
      this.ptp = ptp.port;
      this.stampLate = ptp.stampLate;
    } else if (cfg.clock) {
      this.freeClock = newClockSeries();
    }
  }

  /**
   * The host's PTP port on its NIC `port`, and the software stamp delay model of arrived frames
   * (`jitter.stamp`; null: none)
   */
  private ptpPort(
    port: NodeContext['ports'][number],
    ptpCfg: NonNullable<NodeContext['config']['ptp']>,
  ): { port: PtpPort; stampLate: InOrderLateness | null } {
    const { ctx } = this;
    const cfg = ctx.config;
    const sched = ctx.sched;
    const clock = ctx.clock as SteerableClock;
    if (typeof clock.setFrequencyPpb !== 'function')
      throw new Error(`host ${cfg.name}: PTP needs an emulated clock`);
    const stamp = cfg.jitter?.stamp;
    // software stamps on send: the stamp is taken when the code hands the frame over, and the frame
    // leaves the stack a drawn delay later (the same model as on receive, its own seeded stream)
    const txRng = new Rng(cfg.seed * 139 + 5);
    const txLate =
      stamp && ptpCfg.timestamping === 'software' ? new InOrderLateness(() => draw(stamp, txRng)) : null;
    const ptp = new PtpPort({
      self: cfg.id,
      cfg: ptpCfg,
      clock,
      sched,
      send: (f) => {
        if (txLate !== null) {
          // event messages draw the delay; the others (a Follow_Up) keep their place behind them
          const t = isStampedMessage(f.x) ? txLate.next(sched.current) : txLate.after(sched.current);
          if (t > sched.current) {
            sched.at(t, this.ptpSendLate, f);
            return;
          }
        }
        port.send(f, sched.current);
      },
      emit: ctx.emit,
      linkPeer: cfg.ports[0].peerId,
    });
    if (!stamp) return { port: ptp, stampLate: null };
    const rng = new Rng(cfg.seed * 139 + 3);
    return { port: ptp, stampLate: new InOrderLateness(() => draw(stamp, rng)) };
  }

  /** a frame handed down that has crossed the host's stack (`host.stackDelay`) */
  private readonly sendAfterStack = (now: number, frame: Frame): void => {
    this.ctx.ports[0].send(frame, now);
  };

  /** an arrived frame that has crossed the host's stack: the transport gets it now */
  private readonly upAfterStack = (_now: number, frame: Frame): void => {
    this.transport.onFrame(frame, this.ctx.clock.now());
  };

  /** a PTP event message that leaves the stack after its software send stamp was taken */
  private readonly ptpSendLate = (now: number, frame: Frame): void => {
    this.ctx.ports[0].send(frame, now);
  };

  /** a PTP frame the code gets to late (software stamps): its stamp shows the delay */
  private readonly ptpLate = (_now: number, frame: Frame, arrival: number): void => {
    this.ptp?.onFrame(frame, arrival);
  };

  private readonly sampleFreeClock = (now: number): void => {
    const s = this.freeClock!;
    s.t.push(now);
    s.err.push(this.ctx.clock.read(now) - now);
    s.offset.push(Number.NaN);
    s.state.push(0);
    this.freeTimer = this.ctx.sched.atQuiet(now + FREE_CLOCK_SAMPLE_NS, this.sampleFreeClock);
  };

  private readonly sampleDelivered = (now: number): void => {
    this.delivered.push(now, this.rxDataBytes);
    this.sampler = this.ctx.sched.atQuiet(now + this.ctx.config.sampleNs, this.sampleDelivered);
  };

  /**
   * `at` is physical: the workload is laid out in true time (scheduled in physical time: reading an
   * oscillator far ahead would fix its future before faults can change it).
   */
  start(at: number): void {
    this.trafficStart = at;
    this.ptp?.start(ptpStart(this.ctx.config.ptp, at, this.ctx.sched.current));
    const sched = this.ctx.sched;
    if (this.freeClock) this.freeTimer = sched.atQuiet(at, this.sampleFreeClock);
    if (this.ctx.config.sampleNs > 0) this.sampler = sched.atQuiet(at, this.sampleDelivered);
    for (const f of this.flows) {
      this.timers.push(sched.at(at + f.start, this.startFlow, f));
      if (f.stop !== undefined) this.timers.push(sched.at(at + f.stop, this.stopFlow, f));
    }
  }

  /** the application closes the flow (`FlowSpec.stop`); a flow already acknowledged has nothing to stop */
  private readonly stopFlow = (now: number, f: FlowSpec): void => {
    if (this.transport.endFlow?.(f.id, this.ctx.clock.now()) === true) this.stopped.set(f.id, now);
  };

  private readonly startFlow = (now: number, f: FlowSpec): void => {
    this.started.set(f.id, now);
    this.transport.startFlow(f, this.ctx.clock.now());
  };

  onFrame(now: number, _port: number, frame: Frame): void {
    if (frame.d !== this.ctx.config.id) {
      this.ctx.metrics.inc('misdelivered');
      return;
    }
    if (frame.t === FrameType.Ptp) {
      if (this.stampLate === null) this.ptp?.onFrame(frame, now);
      else this.ctx.sched.at(this.stampLate.next(now), this.ptpLate, frame, now);
    } else {
      if (frame.t === FrameType.Data) {
        this.rxDataBytes += frame.z;
        this.countBySource(frame);
      }
      if (this.stackDelayNs === 0) this.transport.onFrame(frame, this.ctx.clock.now());
      else this.ctx.sched.at(now + this.stackDelayNs, this.upAfterStack, frame);
    }
  }

  private countBySource(frame: Frame): void {
    const every = this.ctx.config.intervalNs;
    if (!every || frame.s < 0) return;
    const i = Math.floor((this.ctx.sched.current - this.trafficStart) / every);
    if (i < 0 || i > 1e6) return;
    let bins = this.bySource.get(frame.s);
    if (bins === undefined) this.bySource.set(frame.s, (bins = []));
    while (bins.length <= i) bins.push(0);
    bins[i] += frame.z;
  }

  departed(_port: number, frame: Frame, txStart: number): void {
    this.ptp?.departed(frame, txStart);
  }

  portDown(): void {}
  portUp(): void {}

  progress(): { flowsDone: number; flowsStarted: number } {
    // a stopped flow never completes: it is done for the run's end
    return { flowsDone: this.received.length + this.stopped.size, flowsStarted: this.started.size };
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
        ...(s && { framesSent: s.framesSent }),
        ...(this.stopped.has(f.id) && { stopped: this.stopped.get(f.id) }),
      });
    }
    this.ctx.metrics.inc('flowsAcked', this.ackedCount);
    const rxFrames = this.transport.receivedFrames?.();
    const section = this.transport.report?.();
    const partial = this.transport.partialPaths();
    return {
      flows,
      received: this.received,
      ...(partial.length > 0 && { partial }),
      ...(rxFrames && { rxFrames }),
      queues: [],
      queueHist: null,
      delivered: this.delivered.toArrays(),
      ...(this.bySource.size > 0 && { bySource: [...this.bySource] }),
      ...(this.ptp && { clock: this.ptp.report() }),
      ...(this.freeClock && { clock: this.freeClock }),
      ...(section !== undefined && { scheme: section }),
    };
  }

  stop(): void {
    for (const t of this.timers) this.ctx.sched.cancel(t);
    this.transport.stop();
    this.ledger?.stop();
    this.ptp?.stop();
    this.ctx.sched.cancel(this.freeTimer);
    this.ctx.sched.cancel(this.sampler);
  }
}
