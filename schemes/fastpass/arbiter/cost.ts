/**
 * What the arbiter's work costs under `compute.model: cost` (docs/compute.md), as the paper's multicore
 * arbiter does it (§6.2): alloc-cores allocate the timeslots of a batch in a pipeline (one timeslot per
 * core at a time, so they work side by side), pathsel-cores colour each timeslot's cross-rack packets
 * (independent timeslots, "embarrassingly parallel"), and the comm-core, the node's main core, goes on
 * hearing requests. Calibrated by `npm run bench` on the reference core, an AMD EPYC vCPU of the
 * project's 2-core machines (2026-11-26): fastpass_alloc_timeslots_per_s 7.1M (256 endpoints,
 * saturated all-to-all, max-min) and fastpass_pathsel_us_per_timeslot 47.7 (16 racks × 32 endpoints,
 * 512 cross-rack packets). The paper's C arbiter: ~23M timeslots per second per core, < 12 µs per
 * timeslot of path selection (`compute.scale` ~0.3 and ~0.25).
 */

/** one timeslot handed to one endpoint pair (fastpass_alloc_ns_per_timeslot) */
export const ALLOC_NS_PER_TIMESLOT = 141;
/** one cross-rack packet of a timeslot edge-coloured onto a path (fastpass_pathsel_ns_per_edge) */
export const PATHSEL_NS_PER_EDGE = 93;

/** the cores of each kind a scenario does not name: one of each (a small arbiter for small fabrics) */
export const DEFAULT_CORES = { alloc: 1, pathsel: 1 } as const;
