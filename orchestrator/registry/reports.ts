/**
 * A run's node reports by the role of their node (the topology's, not a guess from a report's fields):
 * what a scheme's summary reads its hosts', switches' and arbiters' sections from.
 */
import type { NodeReport } from '../../core/messages.js';
import type { NodeRole } from '../../topology/types.js';
import type { RunRecord } from './types.js';

/** The reports of the run's nodes of `role`, in report order. */
export function reportsOf(r: RunRecord, role: NodeRole): NodeReport[] {
  const roles = new Map(r.scenario.topology.nodes.map((n) => [n.name, n.role]));
  return r.reports.filter((rep) => roles.get(rep.name) === role);
}

/**
 * The scheme sections (`NodeReport.scheme`) of the run's nodes of `role` that reported one, with their
 * reports: `T` is the section the scheme's part of that role reports.
 */
export function sectionsOf<T>(r: RunRecord, role: NodeRole): Array<{ report: NodeReport; section: T }> {
  return reportsOf(r, role).flatMap((report) =>
    report.scheme === undefined || report.scheme === null ? [] : [{ report, section: report.scheme as T }],
  );
}
