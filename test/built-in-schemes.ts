/**
 * dcemu's own schemes registered, as the entry points register them (orchestrator/api.ts,
 * orchestrator/cli/commands.ts): imported first by the test files that use the layers below them
 * (the others, which start fabrics through the command line, need not load every scheme).
 */
import { registerSchemes } from '../orchestrator/registry/index.js';
import { BUILT_IN_SCHEMES } from '../schemes/built-in.js';

registerSchemes(BUILT_IN_SCHEMES);
