/**
 * What the allocator's work costs under `compute.model: cost` (docs/compute.md): one NED iteration
 * with its normalization, as a deterministic function of its size. Calibrated by `npm run bench`
 * (flowtune_ned_ns_per_flow, flowtune_ned_ns_per_link: iterations of 768 and 3072 flows over 960 links,
 * and of 192 flows over 384 links as a check) on the reference core, an AMD EPYC vCPU of the project's
 * 2-core machines (2026-11-26): 47.4 µs for 3072 flows, 14.4 µs for 768, 4.1 µs for 192 over 384 links.
 * `compute.scale` stands for a faster or slower core (the paper's 8.29 µs on 4 cores for 3072 flows is
 * a scale of ~0.18).
 */

/** per flow: eq. 3 and the flow's share of its links' sums, then F-NORM's pass over it */
export const NED_NS_PER_FLOW = 14.3;
/** per link: the price update (eq. 9) and its normalization factor */
export const NED_NS_PER_LINK = 3.5;

export function nedIterationNs(flows: number, links: number): number {
  return flows * NED_NS_PER_FLOW + links * NED_NS_PER_LINK;
}
