/**
 * What Harmony's sending and receiving sides of a host share (host/sender.ts, host/receiver.ts): the
 * host's config, components and best-effort transport, the report section both count into, control
 * packets by table or along a reserved path, and the failures the host inferred.
 */
import {
  FrameType,
  makeFrame,
  type NodeClock,
  type Transport,
  type TransportComponents,
  WireSize,
} from '../../../sdk/node.js';
import { Ctl, HarmonyClass, type HarmonyControl, type HarmonyHostConfig, type Hop } from '../wire.js';
import { FAILURE_NAMES, type HarmonyHostSection } from './state.js';

export abstract class HarmonyHostPart {
  protected readonly clock: NodeClock;
  /** ns per byte at one slot's rate */
  protected readonly slotNsPerByte: number;

  constructor(
    protected readonly cfg: HarmonyHostConfig,
    protected readonly c: TransportComponents,
    /** best-effort delivery for messages Harmony rejected or failed (`onReject: best-effort`) */
    protected readonly bestEffort: Transport,
    /** the host's report section, one for both sides */
    protected readonly s: HarmonyHostSection,
  ) {
    this.clock = c.clock;
    this.slotNsPerByte = 8e9 / cfg.slotRateBps;
  }

  /** a control packet routed by the switches' tables */
  protected control(dst: number, flow: number, p: number, x: HarmonyControl): void {
    this.c.nic.send(
      makeFrame({ t: FrameType.Control, s: this.c.hostId, d: dst, f: flow, z: WireSize.Small, p, x }),
    );
  }

  /** a control packet along a grant's reserved path (reject, complete), highest class for complete */
  protected alongPath(dst: number, flow: number, hops: Hop[], x: HarmonyControl): void {
    this.c.nic.send(
      makeFrame({
        t: FrameType.Control,
        s: this.c.hostId,
        d: dst,
        f: flow,
        z: WireSize.Small,
        p: x.h === Ctl.Complete ? HarmonyClass.Data : HarmonyClass.Second,
        r: hops.map((h) => h[1]).reverse(),
        x,
      }),
    );
  }

  /** a failure this host inferred: in its report, and as a `harmony-failure` event */
  protected inferred(flow: number, why: number, due: number): void {
    const now = this.c.physNow();
    this.s.failures.push([now, flow, why, due]);
    // afterDueNs: how long after the first missing data frame was due (a receiver's silence only)
    this.c.emit?.('harmony-failure', {
      flow,
      why: FAILURE_NAMES[why],
      ...(due >= 0 && { afterDueNs: now - due }),
    });
  }
}
