/**
 * The variants of `top-ablation` (experiments.ts says what each changes), apart from the experiment's
 * code so that its definition can list them for `--variants` without loading the runs' machinery.
 */
import { OSCILLATORS, SEND_JITTER } from '../../../sdk/index.js';

/** servers' oscillators under PTP with NIC hardware stamps, and sends late by hrtimer and qdisc delays */
const REAL_CLOCKS = {
  clocks: OSCILLATORS,
  ptp: '{timestamping: hardware}',
  jitter: SEND_JITTER,
};

/** each variant, and the one it is measured against (the same trace, clocks and buffers) */
export const VARIANTS: readonly AblationVariant[] = [
  { name: 'expresspass', set: { scheme: '{kind: expresspass}' } },
  { name: 'expresspass-fast-start', set: { scheme: '{kind: expresspass, alpha: 1}' }, base: 'expresspass' },
  { name: 'top-one-class', set: { scheme: '{kind: top, classes: 1}' }, base: 'expresspass' },
  { name: 'top', set: { scheme: '{kind: top}' }, base: 'expresspass' },
  // §3.2's ideal switch, "an infinite number of priorities": every token ranked by its flow's packets
  // left, the upper bound of what §3.1's classes approximate
  { name: 'top-ideal-classes', set: { scheme: '{kind: top, classes: ideal}' }, base: 'expresspass' },
  // §3.1's hypothetical switch, whose system §3.3's figures are: tokens dropped at the switch once
  // queued 8 pacing times (R2), not judged by the senders' clocks (§4.3)
  { name: 'top-switch-expiry', set: { scheme: '{kind: top, tokenExpiry: switch}' }, base: 'expresspass' },
  // "TOP uses similar token feedback control as that in ExpressPass" (§3.1): its start rate too
  { name: 'top-expresspass-start', set: { scheme: '{kind: top, alpha: 0.0625}' }, base: 'top' },
  // §3.2's class boundaries ⌊K log_p x⌋ (a = 1, b = 0; the paper gives no a, b) instead of the
  // workload's byte quantiles
  { name: 'top-log-classes', set: { scheme: '{kind: top, priorities: log}' }, base: 'top' },
  { name: 'expresspass-ptp', set: { scheme: '{kind: expresspass}', ...REAL_CLOCKS } },
  { name: 'top-ptp', set: { scheme: '{kind: top}', ...REAL_CLOCKS }, base: 'expresspass-ptp' },
];

export interface AblationVariant {
  name: string;
  set: Record<string, string>;
  /** the variant it is measured against */
  base?: string;
}

/** `--variants`' choice with the variants they are measured against (and theirs), in VARIANTS' order */
export function chosenVariants(names?: readonly string[]): readonly AblationVariant[] {
  if (names === undefined) return VARIANTS;
  const want = new Set(names);
  for (let grew = true; grew; ) {
    grew = false;
    for (const v of VARIANTS)
      if (want.has(v.name) && v.base !== undefined && !want.has(v.base)) {
        want.add(v.base);
        grew = true;
      }
  }
  return VARIANTS.filter((v) => want.has(v.name));
}
