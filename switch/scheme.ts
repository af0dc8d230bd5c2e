/**
 * What a scheme plugs into a switch (docs/conventions.md §2: an interface, chosen by a factory): its forwarding,
 * the control frames it speaks, what it wants to see of every forwarded frame, and its own report
 * section. The switch keeps the books (counters, queue series, path accounting) and knows no scheme.
 */
import type { Frame } from '../core/frame.js';
import type { DetectorFactory } from '../core/liveness.js';
import type { DisciplineFactory, NodeContext } from '../core/node-runtime.js';
import type { Routing } from './routing.js';

export interface SwitchScheme {
  /** forwarding and liveness reactions; absent: the ECMP table of the node config */
  readonly routing?: Routing;
  /** a control frame arrived; true when the scheme consumed it */
  onControl?(now: number, ingress: number, frame: Frame): boolean;
  /** a frame was routed from `ingress` to `egress` (before it is queued) */
  forwarded?(frame: Frame, ingress: number, egress: number): void;
  /** a frame routed to `egress` found its buffer full */
  dropped?(frame: Frame, egress: number): void;
  /** a frame was committed for transmission on `port`, starting at `txStart` (physical) */
  departed?(port: number, frame: Frame, txStart: number): void;
  start?(at: number): void;
  stop?(): void;
  /** adds the scheme's counters to the node's metrics and returns its report section */
  report?(): unknown;
}

export type SwitchSchemeFactory = (ctx: NodeContext) => SwitchScheme;

/** What a scheme plugs into a switch process. */
export interface SwitchPart {
  /** its module: routing, control frames, hooks on forwarded frames, a report section (absent: ECMP tables) */
  create?: SwitchSchemeFactory;
  /** its link failure detector (else the BFD-like one of `liveness:`) */
  detector?: DetectorFactory;
  /** its queue discipline per egress port (else 8 strict-priority queues) */
  discipline?: DisciplineFactory;
}
