/**
 * Host qdisc factory: the NIC's discipline by the scenario's `host.qdisc` (docs/scenarios.md#host).
 * Hosts ask for one by name and never import a variant directly.
 */
import type { QdiscKind } from '../../core/messages.js';
import type { DisciplineFactory } from '../../core/node-runtime.js';
import { Fq } from './fq.js';
import { FqCodel } from './fq-codel.js';
import { PfifoFast } from './pfifo-fast.js';
import { Prio } from './prio.js';
import type { HostQdisc } from './qdisc.js';

export { TxLedger } from './ledger.js';
export { HostQdisc, type TxAccounting } from './qdisc.js';

/** `seed`: the hash perturbation of fq_codel's buckets (the node's seed) */
export function createQdisc(kind: QdiscKind, rateBps: number, seed: number): HostQdisc {
  switch (kind) {
    case 'fq_codel':
      return new FqCodel(rateBps, seed);
    case 'fq':
      return new Fq(rateBps);
    case 'pfifo_fast':
      return new PfifoFast(rateBps);
    case 'prio':
      return new Prio(rateBps);
  }
}

/**
 * The NIC's discipline of a host whose scheme brings none: the stack's qdisc on port 0 (null
 * elsewhere, and for a host without a stack config: strict priority).
 */
export const hostDiscipline: DisciplineFactory = (config, port) =>
  port === 0 && config.host !== undefined && config.ports[0] !== undefined
    ? createQdisc(config.host.qdisc, config.ports[0].rateBps, config.seed * 149 + 7)
    : null;
