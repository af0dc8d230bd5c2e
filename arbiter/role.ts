/**
 * What most arbiters leave empty, once: an arbiter runs no flows of its own and reports none, and
 * many let ports come and go unnoticed (their control links have their own detector). A scheme's
 * arbiter extends it and writes what it does: its frames, its start and stop, its report's section.
 */
import type { Frame } from '../core/frame.js';
import type { DetectorFactory } from '../core/liveness.js';
import type { Role, RoleFactory } from '../core/node-runtime.js';

export abstract class ArbiterRole implements Role {
  abstract onFrame(now: number, port: number, frame: Frame): void;
  abstract start(at: number): void;
  abstract stop(): void;
  abstract report(): ReturnType<Role['report']>;

  portDown(_port: number, _now: number): void {}

  portUp(_port: number, _now: number): void {}

  progress(): { flowsDone: number; flowsStarted: number } {
    return { flowsDone: 0, flowsStarted: 0 };
  }

  /** an arbiter's report: its scheme section, and no flows, deliveries or queues */
  protected sectionReport(scheme: unknown): ReturnType<Role['report']> {
    return { flows: [], received: [], queues: [], queueHist: null, scheme };
  }
}

/** What a scheme runs as an arbiter process (attached by its own links: `arbiters` in its definition). */
export interface ArbiterPart {
  create: RoleFactory;
  detector?: DetectorFactory;
}
