/**
 * Setup file of every test file: dcemu's own schemes registered, as the entry points register them
 * (orchestrator/api.ts, orchestrator/cli/commands.ts), for the tests that use the layers below.
 */
import { registerSchemes } from '../orchestrator/registry/index.js';
import { BUILT_IN_SCHEMES } from '../schemes/built-in.js';

registerSchemes(BUILT_IN_SCHEMES);
