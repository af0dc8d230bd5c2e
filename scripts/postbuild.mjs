// Makes the CLI entry executable after tsc (npm links `bin` to it).
import { chmodSync } from 'node:fs';

chmodSync('dist/orchestrator/cli.js', 0o755);
