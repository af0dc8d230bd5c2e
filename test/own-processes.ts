/**
 * Setup file of every test file: a tag in this worker's environment, new for each file, which every
 * process the file starts inherits (the CLI it runs, the node processes that CLI or the library API
 * starts). `ownNodePids` (helpers.ts) reads it back from /proc: a file checks that its own runs left
 * no process, whatever the file beside it is running.
 */
import { randomUUID } from 'node:crypto';
import { TAG_VAR } from './helpers.js';

process.env[TAG_VAR] = randomUUID();
