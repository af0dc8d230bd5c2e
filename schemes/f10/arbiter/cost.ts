/**
 * What the controller's work costs under `compute.model: cost` (docs/compute.md), on the controller's
 * one core: an epoch (F10 §6.3) weighs every hop of every shortest path of every predictable ToR pair
 * and weights every port; PortLand's fabric manager (the baseline) recomputes the routes of every
 * switch toward every ToR with two traversals of the fabric's ports each. Calibrated by `npm run bench`
 * on the reference core, an AMD EPYC vCPU of the project's 2-core machines (2026-11-26), on a k=8
 * three-level AB FatTree with every ToR pair predictable (medians of 7 runs, 16–29, 21–25 and 40–46 ns: the
 * figures vary run to run): `f10_epoch_ns_per_path_hop`,
 * `f10_epoch_ns_per_port` and `f10_routes_ns_per_tor_port`.
 */

/** one hop of one candidate path weighed in an epoch's greedy placement */
export const EPOCH_NS_PER_PATH_HOP = 20;
/** one port's residual capacity set up and handed out as a weight */
export const EPOCH_NS_PER_PORT = 22;
/** one port visited for one ToR when PortLand's routes are recomputed */
export const ROUTES_NS_PER_TOR_PORT = 43;

export function epochNs(work: { pathHops: number; ports: number }): number {
  return work.pathHops * EPOCH_NS_PER_PATH_HOP + work.ports * EPOCH_NS_PER_PORT;
}

export function routesNs(torPorts: number): number {
  return torPorts * ROUTES_NS_PER_TOR_PORT;
}
