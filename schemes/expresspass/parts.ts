/**
 * ExpressPass's and TOP's node-process parts: the switch module, the credit transport, and on every
 * port (a switch's and a NIC's) the credit classes under one limiter.
 */
import type { DisciplineFactory } from '../../sdk/node.js';
import { defineSchemeParts } from '../../sdk/node.js';
import { creditPort } from './discipline.js';
import { ExpressPassTransport } from './host/transport.js';
import { ExpressPassModule } from './switch/module.js';
import type { XpHostConfig, XpSwitchConfig } from './wire.js';

const switchPort: DisciplineFactory = (config, port) =>
  creditPort(config.scheme!.config as XpSwitchConfig, config.ports[port].rateBps);

/** a NIC limits credits as a switch port does */
const nicPort: DisciplineFactory = (config, port) =>
  creditPort((config.scheme!.config as XpHostConfig).nic, config.ports[port].rateBps);

export default defineSchemeParts({
  switch: { create: (ctx) => new ExpressPassModule(ctx), discipline: switchPort },
  host: {
    transport: (config, components, bestEffort) =>
      new ExpressPassTransport(config as XpHostConfig, components, bestEffort),
    discipline: nicPort,
  },
});
