/**
 * ExpressPass on a switch: the credit limiter is the ports' discipline (discipline.ts); this module
 * routes symmetrically, so a flow's data takes the reverse of its credits' path (ExpressPass §3: the
 * credit a switch passed on a link reserves the data that comes back over it), and reports what the
 * limiters did. Symmetric ECMP: the hash is of the unordered host pair and the flow, with the same
 * salt on every switch of a tier, so the two leaves (edges, aggregations) of a flow pick the same
 * index among their equally ordered uplinks; ports the liveness detector declared down are skipped as
 * in the baseline. The hash also takes the credit stream's path epoch, which a receiver bumps when it
 * restarts a stream that went silent: a spine that lost its way to a leaf (the baseline routing has no
 * withdrawal) black-holes one epoch's path, not the flow.
 */
import {
  EcmpUpDown,
  type Frame,
  FrameType,
  flowHash,
  type NodeContext,
  type Routing,
  type SwitchScheme,
} from '../../../sdk/node.js';
import { CreditLimited } from '../discipline.js';
import type { XpSwitchConfig } from '../wire.js';

/** `scheme` section of a switch report, read by schemes/expresspass/definition/. */
export interface XpSwitchSection {
  creditsForwarded: number;
  /** credits a full credit queue refused */
  creditsDropped: number;
  /** most credits one port's queue held */
  maxCreditQueue: number;
  /** scheduled data frames a full buffer dropped here (ExpressPass promises none) */
  dataDropped: number;
  /** TOP's unscheduled packets dropped here (their queue holds one; they promise nothing) */
  unscheduledDropped: number;
  /** TOP's hypothetical switch: tokens dropped for waiting too long */
  tokensExpired: number;
}

/** ECMP whose hash is the same both ways: the unordered host pair, the flow and its path epoch */
class SymmetricEcmp extends EcmpUpDown {
  protected override hash(frame: Frame): number {
    // a credit stream restarted after its path went silent carries a new epoch: a new path, both ways
    const x = frame.x as { e?: unknown } | null;
    const epoch = x !== null && typeof x === 'object' && typeof x.e === 'number' ? x.e : 0;
    return flowHash(
      Math.min(frame.s, frame.d),
      Math.max(frame.s, frame.d),
      frame.f + epoch * 0x100000,
      this.salt,
    );
  }
}

export class ExpressPassModule implements SwitchScheme {
  readonly routing: Routing;
  private dataDropped = 0;
  private unscheduledDropped = 0;
  private readonly unscheduledClass: number;

  constructor(private readonly ctx: NodeContext) {
    const config = ctx.config;
    this.unscheduledClass = (config.scheme?.config as XpSwitchConfig | undefined)?.unscheduledClass ?? -1;
    if (!config.routing)
      throw new Error(`switch ${config.name}: expresspass needs the up/down routing table`);
    this.routing = new SymmetricEcmp(
      config.routing,
      config.ports.length,
      0x5bd1e995 + config.tier * 0x27d4eb2d,
    );
  }

  dropped(frame: Frame): void {
    if (frame.t !== FrameType.Data) return;
    if (frame.p === this.unscheduledClass) this.unscheduledDropped++;
    else this.dataDropped++;
  }

  report(): XpSwitchSection {
    const s: XpSwitchSection = {
      creditsForwarded: 0,
      creditsDropped: 0,
      maxCreditQueue: 0,
      dataDropped: this.dataDropped,
      unscheduledDropped: this.unscheduledDropped,
      tokensExpired: 0,
    };
    for (const p of this.ctx.ports) {
      const d = p.discipline;
      if (!(d instanceof CreditLimited)) continue;
      s.creditsForwarded += d.sent;
      s.creditsDropped += d.refused;
      s.tokensExpired += d.expired;
      s.maxCreditQueue = Math.max(s.maxCreditQueue, d.maxQueued);
    }
    return s;
  }
}
