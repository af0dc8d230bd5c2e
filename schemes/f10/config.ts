/**
 * What F10's processes are configured with (F10 §4, §5.4): every node of an F10 fabric runs the same
 * link failure detector; switches also get their address, their neighbours' and where hosts sit; the
 * controller (schemes/f10/arbiter) its timing and the data-plane topology. All of it rides in a node config's
 * opaque `scheme` section, kind `f10`.
 */
import type { F10Address, F10Shape, NodeConfig } from '../../sdk/node.js';

/** The node-config scheme kind of F10 and of its controller-only baseline (PortLand). */
export const F10_KIND = 'f10';

/**
 * The controllers' names (docs/conventions.md §9: arbiters are `arb0`, `arb1`, ...): the primary, and its backup
 * (F10 §8, `scheme.controller.backup`). Controller i owns the terms t with t mod 2 = i.
 */
export const F10_CONTROLLERS = ['arb0', 'arb1'] as const;

/**
 * F10's failure detector (F10 §5.4): a link must deliver `keepUp` valid frames per window of
 * `windowNs` to stay up, and `bringUp` per window (for a hold-down that doubles on every flap) to come
 * back; idle ports send a keepalive every `keepaliveNs`; a port declared down sends "failure detected"
 * frames so its peer declares it down too.
 */
export interface F10DetectorConfig {
  /** t: aggregation window, virtual ns */
  windowNs: number;
  /**
   * what is counted (§5.4's two settings): valid frames ('packets', to detect corruption), or every
   * frame that arrived, corrupted or not ('transitions', to detect power loss); default 'packets'
   */
  counts?: 'packets' | 'transitions';
  /** c: valid frames per window a working link needs to stay up */
  keepUp: number;
  /** d: valid frames per window a failed link needs to come back up */
  bringUp: number;
  /** an idle port sends a keepalive this often, virtual ns */
  keepaliveNs: number;
  /** first hold-down, in windows, a failed link must stay good before it comes back */
  holdWindows: number;
  /** the hold-down doubles on each flap up to this many windows */
  maxHoldWindows: number;
}

/**
 * F10 on a switch: its address and its neighbours' (F10 §4), how it recovers from failures, and where
 * every host sits. `mode: 'f10'` runs local rerouting and pushback; `mode: 'controller'` is the
 * PortLand-style baseline, where the switch only reports failures and waits for the controller.
 */
export interface F10Config {
  mode: 'f10' | 'controller';
  /** F10 mode: send pushback notifications (off: local rerouting alone, for detour studies) */
  pushback: boolean;
  /**
   * controller mode: prune an uplink the detector declared dead from the ECMP group at once (an
   * ablation); otherwise nothing changes until the controller's routes arrive
   */
  localFailover?: boolean;
  shape: F10Shape;
  self: F10Address;
  /** per port: the F10 address of the switch at the other end, or null for a host */
  peers: Array<F10Address | null>;
  /** ToR location of every host, by host id */
  hostTor: number[];
  detector: F10DetectorConfig;
  /** the detector of the switch's control link to the controller (its own, slower cadence) */
  controlDetector?: F10DetectorConfig;
  /** how often a ToR reports its traffic to the controller, virtual ns */
  reportNs: number;
  /** congestion pushback (F10 §6.2), f10 mode only; null: off */
  congestion: F10CongestionConfig | null;
  /** the length of the intervals congestion loss is counted over (F10 §7.4: 500 µs), virtual ns */
  lossIntervalNs: number;
}

/**
 * Congestion pushback (F10 §6.2): a switch measures each link's randomly-placed load (its load minus
 * what the controller scheduled on it) over the last `windowNs`; a link whose share of its capacity
 * exceeds the average of its group (the switch's up links, or its down links to switches) by more
 * than `threshold` is pushed back: the switches upstream multiply their ECMP weight toward it by `shed`
 * (by default the share of its load at the group's mean, so that the excess moves)
 * until the controller's next epoch.
 */
export interface F10CongestionConfig {
  windowNs: number;
  /** LBdelta above which a link is pushed back (the paper: 20%) */
  threshold: number;
  /**
   * the factor the upstream weight toward a pushed-back link is multiplied by: a number in (0, 1), or
   * 'excess', the share of the link's randomly-placed load that is not above its group's mean
   * (mean / load: LBdelta's part of the load is what moves)
   */
  shed: number | 'excess';
}

/** A host's (or the controller's) part: the detector its links speak. */
export interface F10LinkConfig {
  detector: F10DetectorConfig;
}

/** The detector settings of a node of an F10 fabric, or null when the node runs no F10. */
export function f10DetectorOf(config: NodeConfig): F10DetectorConfig | null {
  const s = config.scheme;
  if (s?.kind !== F10_KIND) return null;
  return (s.config as F10LinkConfig).detector;
}

/** A switch's control-link detector settings, when they differ from its fabric links'. */
export function f10ControlDetectorOf(config: NodeConfig): F10DetectorConfig | null {
  const s = config.scheme;
  if (s?.kind !== F10_KIND) return null;
  return (s.config as Partial<F10Config>).controlDetector ?? null;
}
