/**
 * Flowtune's evaluation (TR'16 §6.3, §6.5) as reproductions (orchestrator/studies/reproduction.ts), each seed
 * against DCTCP on the same trace (the scenario with `scheme.kind=ecmp`: the baseline transport, DCTCP
 * in the examples, on plain ECMP); the headline figures over the seeds, then the first seed's table:
 *
 * - `flowtune-convergence` (§6.3, figure 4): per start and stop of a sender, the senders 10 ms apart
 *   as the paper's (1 ms, the example's, beside it and at `--quick`), the time until every flow is
 *   within 10% of its fair share: Flowtune's from the rates the hosts applied, and both schemes' from
 *   the throughput per `run.interval` (summary.fairness.convergence);
 * - `flowtune-websearch` (§6.5, figure 8): p99 FCT by flowlet size and the p99 queue, for Flowtune as
 *   the scenario has it (its timeline kills the allocator), Flowtune with the allocator left alive
 *   (`timeline=[]`), and DCTCP; the lapses of the first run. The headline ratios are §6.5's: p99s of
 *   FCTs normalized by the empty network's, per the paper's size ranges (`p99ByRange`), raw beside;
 *   and figure 9's p99 queueing delay on 2-hop and 4-hop paths (schemes/flowtune/definition/queueing.ts);
 * - `flowtune-loads` (§6.5, figures 8 and 9 across their loads 0.2-0.8): the same against DCTCP and
 *   pFabric, per range and load, and the queueing delay on paths (the paper's 12× is at 0.8).
 *
 * Each experiment's driver is in its file under experiments/ (convergence.ts, websearch.ts, loads.ts),
 * what they share in experiments/shared.ts; this module is the one the definition names.
 */

export { runConvergence } from './experiments/convergence.js';
export { runLoads } from './experiments/loads.js';
export { PAPER_RANGES, p99ByRange, type RangeP99 } from './experiments/shared.js';
export { runWebsearch } from './experiments/websearch.js';
