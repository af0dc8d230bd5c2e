/**
 * JUnit XML for CI systems (`--junit <file>` on run, chaos and experiment): what a run promised as
 * test cases, in the format every CI system reads (Jenkins, GitLab, GitHub's test reporters): a
 * `<testsuites>` of `<testsuite>`s of `<testcase>`s, a case failing with a `<failure message>` and its
 * details as the element's text.
 *
 * - `run`: the run's invariants (those chaos checks, and the scenario's own `assert` lines) as one
 *   suite, and every planned flow as a case of a second (failing when it did not complete: its outcome
 *   and reason);
 * - `chaos`: one case per run, naming the faults drawn (kind, targets, time), failing with the
 *   invariants it broke and the reduced reproducer with its faults;
 * - `experiment`: one case per figure, ours beside the paper's, failing where it leaves the bound the
 *   experiment states for it.
 */
import { writeFileSync } from 'node:fs';
import type { ChaosReport } from '../chaos/index.js';
import type { Violation } from '../chaos/invariants.js';
import type { FlowNotDone, FlowRow, Summary } from '../engine/collect.js';
import { fmt, meanPm, type Reproduction } from '../studies/reproduction.js';

export interface Case {
  name: string;
  /** the group a case belongs to in the CI's view (JUnit's classname) */
  classname: string;
  timeS?: number;
  /** absent: passed */
  failure?: { message: string; detail: string };
  /** what the case measured, shown beside it */
  out?: string;
}

export interface Suite {
  name: string;
  cases: Case[];
  timeS?: number;
}

/** XML text and attribute values; characters XML 1.0 cannot hold at all are dropped */
function x(s: string): string {
  return (
    s
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters XML 1.0 forbids
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
      .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  );
}

export function junitXml(suites: readonly Suite[]): string {
  const failures = (cs: readonly Case[]) => cs.filter((c) => c.failure).length;
  const all = suites.flatMap((s) => s.cases);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="dcemu" tests="${all.length}" failures="${failures(all)}" errors="0">`,
  ];
  for (const s of suites) {
    lines.push(
      `  <testsuite name="${x(s.name)}" tests="${s.cases.length}" failures="${failures(s.cases)}" errors="0" skipped="0"${s.timeS !== undefined ? ` time="${s.timeS.toFixed(3)}"` : ''}>`,
    );
    for (const c of s.cases) {
      const attrs = `classname="${x(c.classname)}" name="${x(c.name)}"${c.timeS !== undefined ? ` time="${c.timeS.toFixed(3)}"` : ''}`;
      const body = [
        ...(c.failure
          ? [`      <failure message="${x(c.failure.message)}">${x(c.failure.detail)}</failure>`]
          : []),
        ...(c.out ? [`      <system-out>${x(c.out)}</system-out>`] : []),
      ];
      lines.push(
        body.length === 0
          ? `    <testcase ${attrs}/>`
          : `    <testcase ${attrs}>\n${body.join('\n')}\n    </testcase>`,
      );
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>', '');
  return lines.join('\n');
}

export function writeJunit(file: string, suites: readonly Suite[]): void {
  writeFileSync(file, junitXml(suites));
}

/** the invariants every run is checked against (chaos/invariants.ts), in its order */
const GENERIC = ['run-ends', 'flows-accounted', 'processes', 'no-loss-outside-faults', 'faithful'];

/** the invariants as cases: each generic one, then the scheme's and the scenario's asserts that broke or held */
function invariantCases(classname: string, broken: readonly Violation[], asserts: readonly string[]): Case[] {
  const by = new Map<string, string[]>();
  for (const v of broken) by.set(v.invariant, [...(by.get(v.invariant) ?? []), v.detail]);
  const named = [...GENERIC, ...[...by.keys()].filter((k) => !GENERIC.includes(k) && k !== 'assert')];
  const cases: Case[] = named.map((name) => {
    const d = by.get(name);
    return {
      classname,
      name,
      ...(d && { failure: { message: `${name}: ${d[0]}`, detail: d.join('\n') } }),
    };
  });
  const failedAsserts = by.get('assert') ?? [];
  for (const a of asserts) {
    const d = failedAsserts.find((t) => t.startsWith(`'${a}'`));
    cases.push({ classname, name: `assert ${a}`, ...(d && { failure: { message: d, detail: d } }) });
  }
  return cases;
}

/** `dcemu run --junit`: the invariants, and every planned flow */
export function runSuites(
  scenario: string,
  s: Summary,
  broken: readonly Violation[],
  asserts: readonly string[],
  flows: readonly FlowRow[],
  notDone: readonly FlowNotDone[],
  host: (id: number) => string,
): Suite[] {
  const why = new Map(notDone.map((o) => [o.id, o]));
  const cases: Case[] = flows.map((f) => {
    const o = why.get(f.id);
    const reason = o ? `${o.outcome}: ${o.reason}` : f.outcome;
    return {
      classname: `${scenario}.flows`,
      name: `flow ${f.id} ${host(f.src)}→${host(f.dst)} ${f.size} B`,
      ...(f.fct >= 0 && { timeS: f.fct / 1e9 }),
      ...(f.outcome !== 'completed' && { failure: { message: reason, detail: `flow ${f.id}: ${reason}` } }),
    };
  });
  return [
    {
      name: `${scenario}: invariants`,
      cases: invariantCases(`${scenario}.invariants`, broken, asserts),
      timeS: s.wallMs / 1000,
    },
    { name: `${scenario}: flows`, cases },
  ];
}

/** `dcemu chaos --junit`: a case per run */
export function chaosSuites(report: ChaosReport): Suite[] {
  return [
    {
      name: `${report.scenario}: chaos`,
      cases: report.runs.map((r) => {
        const names = [...new Set(r.violations.map((v) => v.invariant))];
        const repro = r.repro
          ? [
              `\nreproduce: dcemu run ${r.repro.file} (${r.repro.faults} faults, reduced in ${r.repro.runs} runs)`,
              ...r.repro.drawn.map((d) => `  ${d}`),
            ].join('\n')
          : '';
        return {
          classname: `${report.scenario}.chaos`,
          name: `seed ${r.seed} (${r.faults} faults)`,
          out: [
            `${r.flows.completed}/${r.flows.planned} flows completed, ${r.flows.failed} failed; results in ${r.dir}`,
            ...r.drawn.map((d) => `fault: ${d}`),
          ].join('\n'),
          ...(names.length > 0 && {
            failure: {
              message: `invariants broken: ${names.join(', ')}${r.repro ? `; reproducer ${r.repro.file}` : ''}`,
              detail: r.violations.map((v) => `${v.invariant}: ${v.detail}`).join('\n') + repro,
            },
          }),
        };
      }),
    },
  ];
}

/** `dcemu experiment --junit`: a case per figure */
export function experimentSuites(r: Reproduction): Suite[] {
  return [
    {
      name: `${r.experiment}: ${r.scenario}`,
      timeS: r.wallS,
      cases: r.figures.map((f) => {
        const d = f.digits ?? 2;
        const paper = f.paper === null ? '-' : typeof f.paper === 'number' ? fmt(f.paper, d) : f.paper;
        const ours = meanPm(f);
        const out = `ours ${ours} ${f.unit} (per seed ${f.values.map((v) => fmt(v, d)).join(', ') || '-'}); the paper ${paper}${f.source ? ` (${f.source})` : ''}`;
        const b = f.bound;
        const off =
          b === undefined
            ? []
            : f.values.filter(
                (v) => (b.min !== undefined && v < b.min) || (b.max !== undefined && v > b.max),
              );
        return {
          classname: r.experiment,
          name: f.label,
          out,
          ...(b !== undefined &&
            (off.length > 0 || f.values.length === 0) && {
              failure: {
                message: `${f.label}: ${f.values.length === 0 ? 'no seed gave a value' : `${off.length} of ${f.values.length} seeds outside`} ${boundText(b)}`,
                detail: out,
              },
            }),
        };
      }),
    },
  ];
}

function boundText(b: { min?: number; max?: number }): string {
  if (b.min !== undefined && b.max !== undefined) return `[${b.min}, ${b.max}]`;
  return b.min !== undefined ? `>= ${b.min}` : `<= ${b.max}`;
}
