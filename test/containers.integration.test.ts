/**
 * Every test that needs the Docker daemon, one after another in this one file: a test checks what its
 * runs left on the daemon by run label (a neighbour's runs would look like leftovers), `dcemu clean`
 * and the swarm's init and leave act daemon-wide, and compose brings up a project of its own. As one
 * file they run beside the process fabrics of the other files (vitest.config.ts starts this file first:
 * most of its time is the daemon's, which those fabrics fill). The dilated docker run, which wants the
 * machine to itself, is in test/timing.integration.test.ts.
 */
// dcemu's own schemes, registered as the entry points register them (the compose file resolves scenarios)
import './built-in-schemes.js';
import './containers/docker.js';
import './containers/clean.js';
import './containers/compose.js';
import './containers/swarm.js';
