/**
 * Setup file of every test file: the node pool its `runScenario` runs shared (helpers.ts) ends after
 * the file, passed or failed, and its processes with it.
 */
import { afterAll } from 'vitest';
import { closeFilePool } from './helpers.js';

afterAll(closeFilePool);
