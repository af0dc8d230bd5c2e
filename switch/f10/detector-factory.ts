/** The node runtime's detector choice: F10's on every node of an F10 fabric, else none (the BFD-like default). */
import type { DetectorFactory } from '../../core/liveness.js';
import { F10Detector } from './detector.js';

export const f10DetectorFactory: DetectorFactory = (config, clock, ports, events) => {
  const cfg = config.f10?.detector ?? config.f10Detector;
  return cfg ? new F10Detector(cfg, clock, ports, config.id, events) : null;
};
