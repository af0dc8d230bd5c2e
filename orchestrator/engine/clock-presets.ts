/**
 * The clocks the studies run schemes on, as `--set` values: what servers' oscillators are like, and
 * how late a host's transmissions leave. One place, so that every study that says "PTP with send
 * jitter" means the same clocks (fastpass-clocks, top-ablation, clock-jitter).
 */

/** servers' crystal oscillators: ±10 µs apart at start (what NTP leaves), ±50 ppm, wandering */
export const OSCILLATORS = "{offset: 'uniform(-10us, 10us)', freq: 'uniform(-50, 50)', wander: 0.5}";

/** a host transmission's lateness behind its schedule: hrtimer and qdisc-lock delays (Fastpass §6.3) */
export const SEND_JITTER = "{send: 'lognormal(200ns, 1)'}";
