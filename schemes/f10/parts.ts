/** F10's node-process parts: the switch module (router, pushback, detector), the controller, and the detector every end of a link speaks. */
import { defineSchemeParts } from '../../sdk/node.js';
import { F10Arbiter } from './arbiter/role.js';
import { f10DetectorFactory } from './detector-factory.js';
import { F10Module } from './switch/module.js';

export default defineSchemeParts({
  switch: { create: (ctx) => new F10Module(ctx), detector: f10DetectorFactory },
  // a host's NIC speaks the switches' detector, so both ends of a host link agree on liveness
  host: { detector: f10DetectorFactory },
  arbiter: { create: (ctx) => new F10Arbiter(ctx), detector: f10DetectorFactory },
});
