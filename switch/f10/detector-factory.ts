/** F10's detector on every node of an F10 fabric (switches, hosts' NICs, the controller's links). */
import type { DetectorFactory } from '../../core/liveness.js';
import { f10DetectorOf } from './config.js';
import { F10Detector } from './detector.js';

export const f10DetectorFactory: DetectorFactory = (config, clock, ports, events) => {
  const cfg = f10DetectorOf(config);
  return cfg ? new F10Detector(cfg, clock, ports, config.id, events) : null;
};
