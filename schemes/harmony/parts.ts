/** Harmony's node-process parts: the switch module (virtual links, rsvp, queue-bound books), its ports' control reserve, and the RPC transport. */
import { defineSchemeParts } from '../../sdk/node.js';
import { HarmonyTransport } from './host/transport.js';
import { ControlReserve } from './switch/discipline.js';
import { HarmonyModule } from './switch/module.js';
import type { HarmonyHostConfig, HarmonySwitchConfig } from './wire.js';

export default defineSchemeParts({
  switch: {
    create: (ctx) => new HarmonyModule(ctx),
    // second-class control keeps its share of every link (§3.2)
    discipline: (config, port) =>
      new ControlReserve(
        config.ports[port].rateBps,
        (config.scheme!.config as HarmonySwitchConfig).controlShare,
      ),
  },
  host: {
    transport: (config, components, bestEffort) =>
      new HarmonyTransport(config as HarmonyHostConfig, components, bestEffort),
  },
});
