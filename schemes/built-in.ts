/**
 * The schemes that come with dcemu. The entry points register them with the orchestrator's registry
 * (orchestrator/api.ts for the library, orchestrator/cli/commands.ts for the command line), as a
 * program of one's own registers a scheme of its own: nothing below the entry points imports a scheme.
 */
import ecmp from './ecmp/index.js';
import expresspass from './expresspass/index.js';
import f10 from './f10/index.js';
import fastpass from './fastpass/index.js';
import flowtune from './flowtune/index.js';
import harmony from './harmony/index.js';

/** in the scenario schema's order */
export const BUILT_IN_SCHEMES = [ecmp, f10, harmony, expresspass, fastpass, flowtune] as const;
