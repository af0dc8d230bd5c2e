// docs/f10.md's measured figures: `dcemu experiment f10-fig6` on the failover fixture the tests use.
import { int, ns, table } from './format.mjs';

const FIXTURE = 'test/fixtures/f10-failover-short.yaml';

/** the per-interval counts from `from` on, to the last non-zero one */
const perInterval = (xs, intervalNs, from) => {
  const i0 = Math.floor(from / intervalNs);
  let end = xs.length;
  while (end > i0 && xs[end - 1] === 0) end--;
  return xs.slice(i0, end).join(', ') || '0';
};

export default [
  {
    id: 'f10-failover',
    doc: 'docs/f10.md',
    runs: [{ key: 'fig6', args: ['experiment', 'f10-fig6', FIXTURE] }],
    render: (r) => {
      const f = r.fig6.json('f10/summary.json');
      const p = r.fig6.json('portland/summary.json');
      const ff = f.f10.failures;
      const pf = p.f10.failures;
      // the experiment's own table of recoveries, as it writes it
      const fig6 = r.fig6.stdout
        .split('\n')
        .filter((l) => l.startsWith('|'))
        .slice(0, 2 + ff.length + pf.length);
      const kill = ff[0].t;
      const iv = f.f10.intervals;
      const piv = p.f10.intervals;
      return [
        ...fig6,
        '',
        ...table(
          ['figure', 'F10', 'baseline'],
          [
            [
              'first rerouted frame after detection',
              `${ff.map((x) => ns(x.firstRerouteAt - x.detectedAt)).join(', ')} (the next frame that needed the port)`,
              '— (waits for the controller)',
            ],
            ['frames without any route', int(f.f10.lost.noRoute), int(p.f10.lost.noRoute)],
            [
              'rebalance / routes installed after detection',
              ff
                .map((x) => (x.rebalanceAt === null ? '-' : `+${ns(x.rebalanceAt - x.detectedAt)}`))
                .join(', '),
              pf.map((x) => (x.rebalanceAt === null ? '-' : ns(x.rebalanceAt - x.detectedAt))).join(', '),
            ],
            [
              'UDP frames sent / received',
              `${int(f.frames.sent)} / ${int(f.frames.received)}`,
              `${int(p.frames.sent)} / ${int(p.frames.received)}`,
            ],
            [
              'congestion pushback',
              `${f.f10.congestionPushback.hot} hot links, ${f.f10.congestionPushback.messages} messages, ${f.f10.congestionPushback.installs} weight cuts, ${f.f10.congestionPushback.removed} removed at epochs`,
              '—',
            ],
            [
              `frames lost per ${ns(iv.intervalNs)} interval from ${ns(Math.floor(kill / iv.intervalNs) * iv.intervalNs)} (the kill at ${ns(kill)}): to congestion`,
              perInterval(iv.congestionDrops, iv.intervalNs, kill),
              perInterval(piv.congestionDrops, piv.intervalNs, kill),
            ],
            [
              '… routed into a port known dead',
              perInterval(iv.intoDeadPort, iv.intervalNs, kill),
              perInterval(piv.intoDeadPort, piv.intervalNs, kill),
            ],
          ],
        ),
      ];
    },
  },
];
