// README's sample of what `npm start` prints: the quickstart's summary, as the command line prints it.
export default [
  {
    id: 'readme-quickstart',
    doc: 'README.md',
    runs: [{ key: 'quickstart', args: ['run', 'examples/quickstart.yaml', '--no-plots'] }],
    render: (r) => [
      '```',
      ...r.quickstart.stdout
        .trimEnd()
        .split('\n')
        // where npm start writes it, not the generator's temporary folder
        .map((l) => l.replace(/^(\s*results\s+).*$/, '$1results/quickstart')),
      '```',
    ],
  },
];
