// docs/development.md's table of where a node process's CPU goes: `npm run profile` (scripts/profile.mjs)
// over the bench's fabrics, each run once plain (its nodes' user and kernel time) and once under V8's
// sampling profiler (the shares of its samples, by the part of dcemu's code each was in).

const pct = (x) => `${(100 * (x ?? 0)).toFixed(1)}%`;

export default [
  {
    id: 'development-profile',
    doc: 'docs/development.md',
    measured:
      'CPU measurements and sampled shares: they move with the machine and its load; the shares less than the CPU-s',
    runs: [{ key: 'profile', script: 'scripts/profile.mjs' }],
    render: (r) => {
      const p = r.profile.json('profile.json');
      const fabrics = p.fabrics;
      const row = (label, cells) => `| ${label} | ${cells.join(' | ')} |`;
      const cpu = (f) => f.userS + f.systemS;
      return [
        row(
          'part',
          fabrics.map((f) => `${f.label} (\`${[f.file, ...f.set].join(' ')}\`)`),
        ),
        `| --- |${fabrics.map(() => ' ---: |').join('')}`,
        row(
          'node processes (profiled)',
          fabrics.map((f) => `${f.processes} (${f.profiles})`),
        ),
        row(
          'CPU-s of the node processes, run plain',
          fabrics.map((f) => cpu(f).toFixed(1)),
        ),
        row(
          'frames handled',
          fabrics.map((f) => f.framesHandled.toLocaleString('en-US')),
        ),
        row(
          'CPU µs per frame handled',
          fabrics.map((f) => ((cpu(f) * 1e6) / f.framesHandled).toFixed(1)),
        ),
        row(
          '**kernel time** (system time / CPU, run plain)',
          fabrics.map((f) => pct(f.systemS / cpu(f))),
        ),
        row(
          '*shares of the samples after start-up:*',
          fabrics.map(() => ''),
        ),
        ...[...p.categories, ...p.outside].map((c) =>
          row(
            c.label,
            fabrics.map((f) => pct(f.shares[c.id])),
          ),
        ),
        row(
          '*start-up, of all samples (the module tree under the profiler: not in the shares)*',
          fabrics.map((f) => pct(f.startupShare)),
        ),
        row(
          'CPU-s of the node processes, profiled',
          fabrics.map((f) => f.profiledCpuS.toFixed(1)),
        ),
      ];
    },
  },
];
