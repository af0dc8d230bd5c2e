/**
 * The scheme sections a summary can hold, by key: each scheme declares its own (declaration merging,
 * in its schemes/<kind>/definition/summary.ts, through `dcemu/scheme`), so `summary.fastpass` is typed without this file naming it. A
 * scheme of your own declares its section the same way:
 * `declare module 'dcemu/scheme' { interface SchemeSections { pfabric: PfabricSummary } }` (or `'dcemu'`).
 * Apart from results.ts so that the SDK can carry it without the run engine.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by each scheme's declaration
export interface SchemeSections {}
