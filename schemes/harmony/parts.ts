/** Harmony's node-process parts: the switch module (virtual links, rsvp, queue-bound books) and the RPC transport. */
import { defineSchemeParts } from '../../scheme/parts.js';
import { HarmonyTransport } from './host/transport.js';
import { HarmonyModule } from './switch/module.js';
import type { HarmonyHostConfig } from './wire.js';

export default defineSchemeParts({
  switch: { create: (ctx) => new HarmonyModule(ctx) },
  host: {
    transport: (config, components, bestEffort) =>
      new HarmonyTransport(config as HarmonyHostConfig, components, bestEffort),
  },
});
