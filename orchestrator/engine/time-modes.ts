/**
 * How a run's time moves (time-driver.ts): the time mode chosen once, by the scenario's `sync`, and
 * what that choice asks of a timeline.
 */
import type { Scenario, TimelineEvent } from '../scenario/resolve.js';
import { conservativeMode } from './conservative.js';
import { dilatedMode } from './dilated.js';
import type { TimeMode } from './time-driver.js';
import { unmatchedStart } from './timeline-actions.js';

/** How a run's time moves, by the scenario's `sync` (time-driver.ts). */
export const TIME_MODES: Record<Scenario['sync'], TimeMode> = {
  conservative: conservativeMode,
  dilated: dilatedMode,
};

/**
 * The first `start` in `timeline` that no earlier `stop` left down, where the time mode needs one
 * (conservative mode waits at a `start` for the node's new process: there must be one to wait for).
 */
export function orphanStart(
  scenario: Scenario,
  timeline: readonly TimelineEvent[],
): TimelineEvent | undefined {
  return TIME_MODES[scenario.sync].startsNeedStops ? unmatchedStart(timeline) : undefined;
}
