/**
 * F10's `scheme:` settings: `f10` runs F10's detector, local rerouting, pushback and epoch controller
 * on an F10 tree; `portland` is the controller-only baseline F10 is compared with: same detector, but
 * the switches only report failures and the controller recomputes routes after a reaction delay. The
 * controller is an arbiter process (`arb0`) with a control link to every switch, and with
 * `controller.backup` a second one (`arb1`, F10 §8's primary/backup).
 */

import {
  duration,
  formatNs,
  type LinkParams,
  positive,
  rate,
  type ScenarioSource,
  type Topology,
} from '../../../sdk/index.js';
import type { F10ControllerTiming } from '../arbiter/role.js';
import type { F10CongestionConfig, F10DetectorConfig } from '../config.js';

const count = { type: 'integer', minimum: 1 };

/**
 * F10's failure detector (§5.4): of the fabric links, or of the control links to the controller; the
 * descriptions name the defaults of the one it configures.
 */
const detectorSchema = (d: {
  window: string;
  keepUp: number;
  bringUp: number;
  keepalive: string;
  hold: number;
  maxHold: number;
}) => ({
  type: 'object',
  additionalProperties: false,
  properties: {
    counts: {
      enum: ['packets', 'transitions'],
      description:
        "what keepUp and bringUp count (§5.4's two settings): packets, valid frames only (a link that corrupts frames is declared down); transitions, every frame that arrives, corrupted or not (bit transitions: only a link that carries nothing, one without power, is declared down) (default packets)",
    },
    window: {
      ...duration,
      description: `t: the window valid frames are counted in; an up link that delivered fewer than keepUp in one is declared down at its end (duration, ns if a number; default ${d.window})`,
    },
    keepUp: {
      ...count,
      description: `c: valid frames per window a working link needs to stay up (default ${d.keepUp})`,
    },
    bringUp: {
      ...count,
      description: `d: valid frames per window a failed link needs, for hold windows in a row, to come back up (default ${d.bringUp})`,
    },
    keepalive: {
      ...duration,
      description: `an idle port sends a keepalive this often; keepUp of them must take less than a window (duration, ns if a number; default ${d.keepalive})`,
    },
    hold: {
      ...count,
      description: `first hold-down, in windows: how long a failed link must stay good before its handshake; it doubles each time the link flaps (default ${d.hold})`,
    },
    maxHold: {
      ...count,
      description: `the hold-down doubles up to this many windows, at least hold (default ${d.maxHold})`,
    },
  },
});

/**
 * Defaults, and why:
 * - detector window 10 µs, c = 2, d = 3, keepalive 2.5 µs: four keepalives per window on an idle
 *   link, so a healthy link clears c with room; a dead one is declared down within two windows
 *   (≤ 20 µs), inside the ≤ 30 µs F10's prototype reached (§7.1).
 * - control links: the same detector ten times slower (window 100 µs, keepalive 25 µs). The controller
 *   acts on epochs of a millisecond, and at the fabric's cadence the control links' keepalives were
 *   a quarter of all frames of a run.
 * - control-plane times: the paper's, times one factor, `timeScale` (default 1/1000), so their order
 *   is the paper's: F10's local reroute and pushback (µs, physical) ≪ PortLand's reaction ≪ F10's epoch.
 *   The paper's values (PAPER_TIMES): the epoch 1 s (§6.3: the controller schedules "every second",
 *   after MicroTE); congestion statistics over 500 ms (§6.2 "the last 500ms"); PortLand's reaction
 *   65 ms (§7.4: PortLand "reports minimum failure response times of 65 ms"). Ours, the paper giving
 *   none: reports every 500 ms (two per epoch, so a pair's last two periods fall within two epochs)
 *   and 2 s up before a recovered link is reinstalled (§5.3: "an extended period of time"; two epochs).
 *   At 1/1000: epoch 1 ms, reports 500 µs, stable 2 ms, congestion window 500 µs, reaction 65 µs.
 *   Physical times (links, the detector, the 500 µs loss interval) are not scaled. A time set in the
 *   scenario is taken as it is, in virtual time, not scaled.
 * - congestion threshold 0.2: the paper's 20% LBdelta. shed 'excess': a
 *   pushed-back link keeps the share of its upstream weight that its group's mean load is of its own
 *   (mean / load), so about LBdelta's part of its randomly-placed load moves (the paper reroutes "a
 *   portion" and gives no factor; this one follows from the quantities it measures, where a fixed
 *   factor would be ours; `shed: 0.5` was the default before, docs/f10.md compares them).
 * - loss interval 500 µs: F10 §7.4 aggregates congestion loss over 500 µs.
 */
export const SCHEME_DEFAULTS = {
  detector: { window: '10us', keepUp: 2, bringUp: 3, keepalive: '2.5us', hold: 1, maxHold: 64 },
  controlDetector: { window: '100us', keepUp: 2, bringUp: 3, keepalive: '25us', hold: 1, maxHold: 64 },
  controller: { predictableDelta: 0.2 },
  congestion: { threshold: 0.2, shed: 'excess' },
  lossInterval: '500us',
  timeScale: 0.001,
} as const;

/** The control-plane times at the paper's scale, ns; a run's defaults are these times `timeScale`. */
export const PAPER_TIMES = {
  /** §6.3: the centralized scheduler runs "every second" */
  epochNs: 1e9,
  /** ours (the paper gives none): two traffic reports per epoch */
  reportNs: 5e8,
  /** ours (§5.3 "an extended period of time"): two epochs up before a recovered link is reinstalled */
  stableNs: 2e9,
  /** §7.4: PortLand "reports minimum failure response times of 65 ms" */
  reactionDelayNs: 65e6,
  /** §6.2: "The switch keeps traffic statistics for the last 500ms" */
  congestionWindowNs: 5e8,
} as const;

/** a paper time scaled, as a duration the schema's descriptions print */
const scaled = (ns: number, scale: number = SCHEME_DEFAULTS.timeScale): string => formatNs(ns * scale);

const D = SCHEME_DEFAULTS;

/** The `scheme:` properties F10 reads (besides kind). */
export const f10Properties = {
  pushback: {
    type: 'boolean',
    description:
      'f10 only: pushback (§5.2), switches telling their neighbours the prefixes a failure left them unable to reach; false studies local rerouting alone (default true)',
  },
  /** congestion pushback (F10 §6.2), f10 only: false, or its settings */
  congestion: {
    description: `f10 only: congestion pushback (§6.2), which moves flows off links loaded above their group's mean; false turns it off, true or an object of settings on (default: on, window ${scaled(PAPER_TIMES.congestionWindowNs)}, threshold ${D.congestion.threshold}, shed ${D.congestion.shed})`,
    oneOf: [
      { type: 'boolean' },
      {
        type: 'object',
        additionalProperties: false,
        properties: {
          window: {
            ...duration,
            description: `each switch measures every link's randomly-placed load over this window, which slides by a quarter (duration, ns if a number; default the paper's ${formatNs(PAPER_TIMES.congestionWindowNs)} × timeScale: ${scaled(PAPER_TIMES.congestionWindowNs)})`,
          },
          threshold: {
            type: 'number',
            exclusiveMinimum: 0,
            description: `LBdelta: a link whose load exceeds its group's mean by more than this share of its capacity is pushed back (default ${D.congestion.threshold})`,
          },
          shed: {
            oneOf: [{ type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 }, { const: 'excess' }],
            description: `the factor the upstream ECMP weight toward a pushed-back link is multiplied by, until the controller's next weights: a number in (0, 1), or 'excess', the link's group's mean load over its own, so that the load above the mean moves (default ${D.congestion.shed})`,
          },
        },
      },
    ],
  },
  timeScale: {
    type: 'number',
    exclusiveMinimum: 0,
    maximum: 1,
    description: `the one factor every control-plane time is scaled by from the paper's (the epoch ${formatNs(PAPER_TIMES.epochNs)}, reports ${formatNs(PAPER_TIMES.reportNs)}, stable ${formatNs(PAPER_TIMES.stableNs)}, the congestion window ${formatNs(PAPER_TIMES.congestionWindowNs)}, PortLand's reaction ${formatNs(PAPER_TIMES.reactionDelayNs)}); a time set in the scenario is taken as it is; physical times (links, the detector, lossInterval) are never scaled (default ${D.timeScale})`,
  },
  localFailover: {
    type: 'boolean',
    description:
      'portland only: each switch also drops an uplink its detector declared dead from its own ECMP group at once (the baseline as dcemu ran it before; an ablation). Default false: PortLand as its paper reports, nothing changes before the fabric manager installs new routes',
  },
  /** congestion loss is counted per interval of this length (F10 §7.4: 500 µs) */
  lossInterval: {
    ...duration,
    description: `congestion loss (summary.f10.intervals) is counted per interval this long from traffic start, as F10 §7.4 (duration, ns if a number; default ${D.lossInterval})`,
  },
  detector: {
    ...detectorSchema(D.detector),
    description:
      "the failure detector (§5.4) of the fabric links, run by the switches and the hosts' NICs; fields left out take their defaults",
  },
  controller: {
    type: 'object',
    additionalProperties: false,
    description:
      'the controller, arbiter process arb0 with a control link to every switch (and its backup arb1): its timing, links and detector',
    properties: {
      epoch: {
        ...duration,
        description: `how often the controller runs an epoch: it reinstalls links that stayed up for stable, resends its state to every switch and, in f10, places the predictable ToR pairs and sends the weighted-ECMP weights (duration, ns if a number; default ${formatNs(PAPER_TIMES.epochNs)} × timeScale: ${scaled(PAPER_TIMES.epochNs)})`,
      },
      stable: {
        ...duration,
        description: `a link that comes back must stay up this long before the controller reinstalls it, at its next epoch (duration, ns if a number; default ${formatNs(PAPER_TIMES.stableNs)} × timeScale: ${scaled(PAPER_TIMES.stableNs)})`,
      },
      reactionDelay: {
        ...duration,
        description: `portland: the controller recomputes and installs every switch's routes this long after a failure report (duration, ns if a number; default ${formatNs(PAPER_TIMES.reactionDelayNs)} × timeScale: ${scaled(PAPER_TIMES.reactionDelayNs)})`,
      },
      report: {
        ...duration,
        description: `how often each switch reports the ports it holds down and each ToR its bytes per destination ToR (duration, ns if a number; default ${formatNs(PAPER_TIMES.reportNs)} × timeScale: ${scaled(PAPER_TIMES.reportNs)})`,
      },
      backup: {
        type: 'boolean',
        description:
          'F10 §8 primary/backup: a second controller, arb1, with its own control link to every switch (as link); switches report to both, only the one whose term they obey commands, and arb1 takes over when more than half of the switches report their control link to arb0 down (default false: one more process and twice the control frames would move every figure of a run without it)',
      },
      predictableDelta: {
        type: 'number',
        exclusiveMinimum: 0,
        description: `f10: a ToR pair is predictable, and placed by the controller, when its latest report period is within this fraction of the mean of its last two (default ${D.controller.predictableDelta})`,
      },
      /** the detector of the control links (slower than the fabric's: the controller works on epochs) */
      detector: {
        ...detectorSchema(D.controlDetector),
        description: `the failure detector of the control links, fields as detector's; its defaults are its own, ten times slower (window ${D.controlDetector.window}, keepalive ${D.controlDetector.keepalive}), not detector's settings`,
      },
      /** the control links from the controller to every switch; default: the fabric links' */
      link: {
        type: 'object',
        additionalProperties: false,
        description:
          "the control links from the controller to every switch (default: the fabric links' rate and delay)",
        properties: {
          rate: {
            ...rate,
            description: "their rate (rate, bit/s if a number; default: the fabric links' rate)",
          },
          delay: {
            ...duration,
            description:
              "their propagation delay (duration, ns if a number; default: the fabric links' delay)",
          },
        },
      },
    },
  },
};

export interface F10Settings extends F10ControllerTiming {
  kind: 'f10' | 'portland';
  /** the factor the paper's control-plane times were scaled by for this run's defaults */
  timeScale: number;
  /** portland: a switch prunes a dead uplink from its own ECMP group at detection (an ablation) */
  localFailover: boolean;
  /** f10: pushback on (default) or off, to study local rerouting alone */
  pushback: boolean;
  detector: F10DetectorConfig;
  /** the detector of the control links between the switches and the controller */
  controlDetector: F10DetectorConfig;
  /** f10: congestion pushback (§6.2), null when off */
  congestion: F10CongestionConfig | null;
  /** congestion loss is counted per interval of this many virtual ns */
  lossIntervalNs: number;
  /** the controller's control links */
  controlLink: LinkParams;
  /** a backup controller, arb1 (F10 §8) */
  backup: boolean;
  [setting: string]: unknown;
}

export function resolveF10(
  src: ScenarioSource,
  topo: Topology,
  kind: string,
  links: { fabric: LinkParams },
): F10Settings {
  const s = src.data.scheme;
  if (kind !== 'f10' && kind !== 'portland') throw new Error(`resolveF10: kind ${kind}`);
  if (!topo.f10)
    throw src.error(['scheme', 'kind'], `scheme ${s.kind} needs an F10 tree: use topology kind f10`);
  const dur = (path: string[], v: string | number): number => positive(src, path, v, 'duration');
  const c = { ...SCHEME_DEFAULTS.controller, ...(s.controller ?? {}) };
  const detector = resolveDetector(src, ['detector'], { ...SCHEME_DEFAULTS.detector, ...(s.detector ?? {}) });
  const controlDetector = resolveDetector(src, ['controller', 'detector'], {
    ...SCHEME_DEFAULTS.controlDetector,
    ...(c.detector ?? {}),
  });
  for (const field of ['pushback', 'congestion'])
    if (s[field] !== undefined && s.kind !== 'f10')
      throw src.error(['scheme', field], `${field} is part of F10; scheme ${s.kind} has none`);
  if (s.localFailover !== undefined && s.kind !== 'portland')
    throw src.error(
      ['scheme', 'localFailover'],
      `localFailover is part of the PortLand baseline; scheme ${s.kind} has none`,
    );
  const scale: number = s.timeScale ?? D.timeScale;
  /** a control-plane time: as the scenario sets it, else the paper's times the scale */
  const ctl = (path: string[], v: string | number | undefined, paperNs: number): number =>
    v === undefined ? Math.max(1, Math.round(paperNs * scale)) : dur(path, v);
  let congestion: F10CongestionConfig | null = null;
  if (kind === 'f10' && s.congestion !== false) {
    const g: { window?: string | number; threshold: number; shed: number | 'excess' } = {
      ...SCHEME_DEFAULTS.congestion,
      ...(typeof s.congestion === 'object' ? s.congestion : {}),
    };
    congestion = {
      windowNs: ctl(['congestion', 'window'], g.window, PAPER_TIMES.congestionWindowNs),
      threshold: g.threshold,
      shed: g.shed,
    };
  }
  const link = c.link ?? {};
  const controlLink: LinkParams = {
    rateBps:
      link.rate === undefined
        ? links.fabric.rateBps
        : positive(src, ['controller', 'link', 'rate'], link.rate, 'rate'),
    propNs: link.delay === undefined ? links.fabric.propNs : dur(['controller', 'link', 'delay'], link.delay),
  };
  return {
    kind,
    timeScale: scale,
    localFailover: s.localFailover ?? false,
    pushback: s.pushback ?? true,
    detector,
    controlDetector,
    congestion,
    lossIntervalNs: dur(['lossInterval'], s.lossInterval ?? SCHEME_DEFAULTS.lossInterval),
    epochNs: ctl(['controller', 'epoch'], c.epoch, PAPER_TIMES.epochNs),
    stableNs: ctl(['controller', 'stable'], c.stable, PAPER_TIMES.stableNs),
    reactionDelayNs: ctl(['controller', 'reactionDelay'], c.reactionDelay, PAPER_TIMES.reactionDelayNs),
    reportNs: ctl(['controller', 'report'], c.report, PAPER_TIMES.reportNs),
    predictableDelta: c.predictableDelta,
    controlLink,
    backup: c.backup ?? false,
  };
}

/** A detector section with its defaults filled in, checked; errors name `scheme.<path>.<field>`. */
function resolveDetector(
  src: ScenarioSource,
  path: string[],
  d: {
    counts?: 'packets' | 'transitions';
    window: string | number;
    keepUp: number;
    bringUp: number;
    keepalive: string | number;
    hold: number;
    maxHold: number;
  },
): F10DetectorConfig {
  const detector: F10DetectorConfig = {
    ...(d.counts === 'transitions' && { counts: 'transitions' as const }),
    windowNs: positive(src, [...path, 'window'], d.window, 'duration'),
    keepUp: d.keepUp,
    bringUp: d.bringUp,
    keepaliveNs: positive(src, [...path, 'keepalive'], d.keepalive, 'duration'),
    holdWindows: d.hold,
    maxHoldWindows: d.maxHold,
  };
  if (detector.maxHoldWindows < detector.holdWindows)
    throw src.error(['scheme', ...path, 'maxHold'], `maxHold must be >= hold (${detector.holdWindows})`);
  if (detector.keepaliveNs * detector.keepUp >= detector.windowNs)
    throw src.error(
      ['scheme', ...path, 'keepalive'],
      `an idle link sends one keepalive per ${detector.keepaliveNs} ns: it cannot deliver keepUp=${detector.keepUp} per ${detector.windowNs} ns window; send them more often`,
    );
  return detector;
}
