/**
 * F10's detector on every node of an F10 fabric (switches, hosts' NICs, the controller's links). A
 * switch's control link to the controller runs its own detector at its own, slower cadence: the
 * controller works on epochs of milliseconds, and keepalives every few microseconds on every control
 * link would be most of the fabric's frames.
 */

import type { DetectorFactory, Frame, LinkDetector, LivenessEvents } from '../../sdk/node.js';
import { f10ControlDetectorOf, f10DetectorOf } from './config.js';
import { F10Detector } from './detector.js';

export const f10DetectorFactory: DetectorFactory = (config, clock, ports, events) => {
  const cfg = f10DetectorOf(config);
  if (!cfg) return null;
  const control = f10ControlDetectorOf(config);
  const isControl = config.ports.map((p) => p.dir === 'control');
  if (control === null || !isControl.some(Boolean))
    return new F10Detector(cfg, clock, ports, config.id, events);
  const split = new SplitDetector(ports.length, events);
  const data = new F10Detector(
    cfg,
    clock,
    ports,
    config.id,
    split.events,
    isControl.map((c) => !c),
  );
  const ctl = new F10Detector(control, clock, ports, config.id, split.events, isControl);
  split.owners = isControl.map((c) => (c ? ctl : data));
  split.parts = [data, ctl];
  if (data.garbled || ctl.garbled) split.garbled = (port, now) => split.owners[port].garbled?.(port, now);
  return split;
};

/** Two detectors over disjoint sets of a node's ports, as one. */
class SplitDetector implements LinkDetector {
  readonly up: boolean[];
  owners: F10Detector[] = [];
  parts: F10Detector[] = [];
  /** present when a part counts bit transitions: the corrupted frames of its ports go to it */
  garbled?: (port: number, now: number) => void;
  /** the parts' events: the port's state here first, then the node's */
  readonly events: LivenessEvents;

  constructor(n: number, events: LivenessEvents) {
    this.up = new Array<boolean>(n).fill(true);
    this.events = {
      portDown: (port, now, silentNs) => {
        this.up[port] = false;
        events.portDown(port, now, silentNs);
      },
      portUp: (port, now) => {
        this.up[port] = true;
        events.portUp(port, now);
      },
    };
  }

  get keepalivesSent(): number {
    return this.parts.reduce((n, d) => n + d.keepalivesSent, 0);
  }

  start(now: number): void {
    for (const d of this.parts) d.start(now);
  }

  stop(): void {
    for (const d of this.parts) d.stop();
  }

  heard(port: number, now: number, frame?: Frame): void {
    this.owners[port].heard(port, now, frame);
  }

  sent(port: number, now: number): void {
    this.owners[port].sent(port, now);
  }
}
