/** The scenario's defaults, each with its reason (`DEFAULTS`), and the ports' (`PortDefaults`). */
export interface PortDefaults {
  bufferBytes: number;
  ecnBytes: number;
  commitAheadNs: number;
  hostBufferBytes: number;
  /** a host NIC's ECN marking threshold, bytes (0: none, the default) */
  hostEcnBytes: number;
}

/**
 * Defaults, and why:
 * - tdf 2000: two real milliseconds per virtual microsecond. A 10 Gbit/s hop (1.2 µs serialization +
 *   1 µs propagation) then gives 4.4 ms of real lookahead, above the tail of timer and scheduling
 *   lateness of ~20 processes on a 2-core machine: the quickstart measured 0.05% causality misses at
 *   tdf 2000, 0.07% at 1500 and 0.3% at 1000 (defaults come from measurements: docs/conventions.md §11).
 * - 10 Gbit/s links with 1 µs propagation: the quickstart's fabric; the delay stands for cable plus
 *   switch pipeline latency.
 * - 400 KB per port with ECN at 30 KB: a shallow-buffer ToR; K follows DCTCP's K > C·RTT/7 with room
 *   to spare for a ~12 µs fabric RTT at 10 Gbit/s (the paper's 65 frames assumed ~100 µs host RTTs).
 * - commit-ahead 2 µs: a transmit pipeline of about two MTU times; it also gives every hop lookahead.
 * - liveness 10 µs x 3: F10-style fast detection (F10 §5.4 reaches tens of microseconds).
 * - routing: switches withdraw the hosts they can no longer reach, as a BGP-run Clos does (RFC 7938),
 *   1 ms per hop to process an update and install it (a software control plane; F10 §5.4 cites
 *   heartbeat- and debounce-bound detection, which the liveness setting models separately).
 * - captureLimit 100000 frames per port: at most ~18 MB of pcapng per port (176 bytes per 1500-byte
 *   frame snapped at 128 bytes), 120 ms of a busy 10 Gbit/s link: a capture is for looking at a
 *   run, not for archiving it, and the limit keeps a forgotten `capture: [spine0]` from filling a disk.
 * - host: Linux's host stack as most machines run it (docs/decisions/0007-linux-host-stack.md): the send
 *   buffer at tcp_wmem's largest autotuned size (4 MiB, Documentation/networking/ip-sysctl.rst), TCP
 *   small queues capped at tcp_limit_output_bytes (1 MiB from Linux 4.20 to 6.15, ip-sysctl.rst;
 *   4 MiB after), fq_codel (systemd's net.core.default_qdisc, sysctl.d/50-default.conf; the kernel's
 *   own default is pfifo_fast). `stack: unbounded` is dcemu's NIC before: no limits, strict priority.
 * - onOff (the on-off pattern): ours. F10 §7.2 draws ON periods, OFF periods and packet gaps from
 *   log-normals fitted to Benson et al. (IMC'10) but gives no parameters, and Benson et al. show
 *   fitted CDFs, not numbers: heavy-tailed, log-normal the best fit for all three. σ 1 gives such
 *   tails (mean 1.65 × median, p99 10 × median); medians of 300 µs ON and 150 µs OFF put a few
 *   periods in each of F10 §7.4's 500 µs loss intervals and dozens in a 10 ms run, ON two thirds of
 *   the time, so a load up to 2/3 keeps an ON period below the link rate; 2 µs gaps (unscaled: 3.6
 *   Gbit/s while ON, a load of 0.24 at 10 Gbit/s); packets of a full 1500 B frame (Benson et al.'s
 *   sizes are bimodal, ~200 B and ~1400 B).
 */
export const DEFAULTS = {
  tdf: 2000,
  seed: 1,
  link: { rate: '10Gbps', delay: '1us' },
  ports: {
    buffer: '400KB',
    ecnThreshold: '30KB',
    commitAhead: '2us',
    hostBuffer: '8MB',
    hostEcnThreshold: '0B',
  },
  host: {
    linux: { qdisc: 'fq_codel', sendBuffer: '4MiB', smallQueues: '1MiB', cwndValidation: true },
    unbounded: { qdisc: 'prio', sendBuffer: '0B', smallQueues: '0B', cwndValidation: false },
    stack: 'linux',
  },
  liveness: { interval: '10us', multiplier: 3 },
  routing: { withdraw: true, updateDelay: '1ms' },
  // a deadline below 1.25 line-rate transfer times is one no transport meets under any load
  workload: {
    duration: '20ms',
    deadlineAtLeast: 1.25,
    onOff: {
      on: 'lognormal(300us, 1)',
      off: 'lognormal(150us, 1)',
      interarrival: 'lognormal(2us, 1)',
      packet: 1500,
    },
  },
  run: {
    sync: 'conservative',
    step: '100us',
    drain: '20ms',
    sample: '5us',
    interval: '100us',
    missThreshold: 0.001,
    logLevel: 'info',
    plots: true,
    captureLimit: 100_000,
  },
} as const;
