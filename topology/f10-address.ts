/**
 * F10 addressing (F10 §4, Table 1): every switch has a level i, a location and an index. With p = k/2
 * up/down ports per switch and L+1 levels, b = ceil(log2 p) bits per level; a level-i subtree's
 * location is `(b+1 bits chosen at level L).(b bits at L-1)...(b bits at i+1)` followed by i·b zero
 * bits, so `prefix(a, i) = a >> (i·b)` names the level-i subtree holding location a. A ToR (level 0)
 * location is the full path; hosts share their ToR's location.
 *
 * Wiring: the p^i roots of a level-i subtree (index j) connect to p parents in the parent group of
 * p^(i+1) switches (p^L at the top): a type A subtree wires root j to parents jp..(j+1)p-1 (consecutive),
 * a type B subtree to parents j, j+p^i, j+2p^i, ... (stride p^i). A standard FatTree has only type A
 * subtrees; an AB FatTree alternates: the subtree chosen with an even value at its level is A, odd is B
 * (`prefix(location, level) mod 2`). At level 0 (p^0 = 1) both wirings coincide.
 *
 * Pure functions shared by the topology builder, the verifier, the switches and the controller.
 */

export type SubtreeType = 'A' | 'B';
export type F10Variant = 'ab' | 'standard';

export interface F10Address {
  level: number;
  location: number;
  index: number;
  /** type of the subtree this switch is a root of (meaningless at the top level, reported as 'A') */
  type: SubtreeType;
}

/** Shape of the tree: p ports up and p down per switch (2p down at the top), levels 0..L. */
export interface F10Shape {
  p: number;
  /** L: the top level's number (a 3-level tree has L = 2) */
  L: number;
  variant: F10Variant;
}

/** bits per level in a location */
export function bitsPerLevel(p: number): number {
  return Math.max(1, Math.ceil(Math.log2(p)));
}

/** prefix(a, i) = a >> (i·b): the level-i subtree that location a lies in */
export function prefix(location: number, level: number, b: number): number {
  return Math.floor(location / 2 ** (level * b));
}

export function samePrefix(a: number, a2: number, level: number, b: number): boolean {
  return prefix(a, level, b) === prefix(a2, level, b);
}

/** Type of the level-`level` subtree holding `location`, given the variant. */
export function subtreeType(location: number, level: number, shape: F10Shape): SubtreeType {
  if (shape.variant === 'standard' || level >= shape.L) return 'A';
  return prefix(location, level, bitsPerLevel(shape.p)) % 2 === 0 ? 'A' : 'B';
}

/** number of roots of a level-i subtree (the top level has one group of p^L) */
export function groupSize(p: number, level: number): number {
  return p ** level;
}

/**
 * Indices, in the parent group at level+1, of the p parents of root `index` of a level-`level`
 * subtree of the given type.
 */
export function parentIndices(type: SubtreeType, index: number, level: number, p: number): number[] {
  const out: number[] = [];
  const stride = p ** level;
  for (let m = 0; m < p; m++) out.push(type === 'A' ? index * p + m : index + m * stride);
  return out;
}

/**
 * Index of the root of a type-`type` level-`childLevel` subtree that parent `parentIndex` (at level
 * childLevel+1) connects to: exactly one per child subtree.
 */
export function childIndexOf(parentIndex: number, type: SubtreeType, childLevel: number, p: number): number {
  return type === 'A' ? Math.floor(parentIndex / p) : parentIndex % p ** childLevel;
}

/**
 * Failure group (F10 §5.1): the parents of root j of type-t subtrees at `childLevel`, identified by
 * (t, j). Parent `parentIndex` belongs to it when it is wired to root j of every type-t child subtree.
 */
export function inFailureGroup(
  parentIndex: number,
  group: { type: SubtreeType; index: number },
  childLevel: number,
  p: number,
): boolean {
  return childIndexOf(parentIndex, group.type, childLevel, p) === group.index;
}
