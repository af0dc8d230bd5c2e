/**
 * The house's rooms and which way their doors open (docs/architecture.md, "Layers"). `npm test` runs
 * it (`npm run deps`); every rule is an error. The layers, bottom to top, are LAYERS below: a module
 * imports from its own layer and those below it, never one above.
 *
 * A scheme is one folder, schemes/<s>/: index.ts (its definition, `defineScheme`), parts.ts (what
 * node processes load, `defineSchemeParts`), its parts' folders (switch/, host/, arbiter/), its
 * definition's own files (definition/), its studies (experiments.ts or experiments/) and the files its
 * parts share. A node process loads its scheme's parts by module (core/scheme-parts.ts), the command
 * line a scheme's experiments: neither is imported by the layers below. A scheme imports dcemu through
 * the SDK alone, as an outside one does: its node-side code sdk/node.ts, its definition sdk/index.ts,
 * its studies sdk/study.ts too. The entry points register the built-in schemes (schemes/built-in.ts)
 * with the registry below them (orchestrator/registry/index.ts).
 */
const ROLES = '^(switch|host|arbiter)/';
/** each role's runtime folder, and its folder inside a scheme */
const ROLE_DIRS = { switch: ['switch', 'switch'], host: ['host', 'host'], arbiter: ['arbiter', 'arbiter'] };
const roleCode = ([runtime, part]) => `^${runtime}/|^schemes/[^/]+/${part}/`;
/** a switch, a host and an arbiter are different processes: none imports another's role code */
const ROLE_RULES = Object.entries(ROLE_DIRS).map(([role, dirs]) => ({
  name: `${role}-imports-no-other-role`,
  comment: "a switch, a host and an arbiter are different processes: none imports another's role code",
  severity: 'error',
  from: { path: roleCode(dirs) },
  to: {
    path: Object.entries(ROLE_DIRS)
      .filter(([other]) => other !== role)
      .map(([, d]) => roleCode(d))
      .join('|'),
  },
}));
/**
 * The orchestrator's layers are its folders: engine/ (a run from a resolved scenario to its results,
 * with scenario/, topology/, runtime/, registry/, plots/ and page/ beside it), then api.ts (the
 * library's Fabric), then the studies that drive whole runs (studies/, chaos/, ns3/, and each scheme's
 * experiments), then the command line (cli.ts and cli/). test/layers.test.ts checks that every source
 * file is in one layer.
 */
const STUDIES =
  '^(orchestrator/(studies|chaos|ns3)/|sdk/study[.]ts$|schemes/[^/]+/experiments([.]ts$|/))';
const COMMANDS = '^orchestrator/(cli[.]ts$|cli/)';
const BELOW_API =
  '^(orchestrator/(scenario|topology|runtime|registry|plots|page|engine)/|schemes/[^/]+/(definition/|index[.]ts$))';
/** a scheme's node-side code: its parts' folders, parts.ts and the files they share */
const SCHEME_NODE_SIDE = '^schemes/[^/]+/((switch|host|arbiter)/|(?!index[.]ts$|experiments[.]ts$)[^/]+[.]ts$)';

/**
 * The layers, bottom to top: a module imports only from its own layer and those below it, so no
 * arrow runs up (`layer-<name>-imports-nothing-above`). Every source file is in one
 * (test/layers.test.ts checks it). The schemes sit above the orchestrator's engine, on the SDK; the
 * entry points (api.ts, the command line) register the built-in ones (schemes/built-in.ts).
 */
const LAYERS = [
  ['core', '^core/'],
  ['topology', '^topology/'],
  ['roles', ROLES],
  ['sdk-node', '^sdk/(node|parts)[.]ts$'],
  ['scheme-node-side', SCHEME_NODE_SIDE],
  ['engine', '^orchestrator/(scenario|topology|runtime|registry|plots|page|engine)/'],
  ['sdk', '^sdk/(index|settings)[.]ts$'],
  ['scheme-definitions', '^schemes/[^/]+/(definition/|index[.]ts$)'],
  ['built-in-schemes', '^schemes/built-in[.]ts$'],
  ['api', '^orchestrator/api[.]ts$'],
  ['studies', STUDIES],
  ['commands', COMMANDS],
  ['bench', '^bench/'],
];
const LAYER_RULES = LAYERS.slice(0, -1).map(([name, path], i) => ({
  name: `layer-${name}-imports-nothing-above`,
  comment: `the ${name} layer imports from its own layer and those below: ${LAYERS.slice(i + 1)
    .map(([n]) => n)
    .join(', ')} are above it`,
  severity: 'error',
  from: { path },
  to: { path: LAYERS.slice(i + 1).map(([, p]) => `(${p})`).join('|') },
}));

module.exports = {
  forbidden: [
    ...LAYER_RULES,
    {
      name: 'no-circular',
      comment: 'no module reaches itself through its imports (type-only and dynamic imports included)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-imports-nothing-of-ours',
      comment: 'core/ is the frame, the clock, the sync and the endpoint: it learns no role, scheme or orchestrator',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^(topology|switch|host|arbiter|schemes|orchestrator|bench|test)/' },
    },
    {
      name: 'topology-is-shared-data',
      comment: 'the topology types are read by roles, schemes and the orchestrator alike: they import core only',
      severity: 'error',
      from: { path: '^topology/' },
      to: { path: '^(switch|host|arbiter|schemes|orchestrator|bench)/' },
    },
    {
      name: 'roles-never-import-the-orchestrator',
      comment: 'a node process runs core, its role and its scheme parts; nothing of the orchestrator',
      severity: 'error',
      from: { path: `${ROLES}|^schemes/[^/]+/(switch|host|arbiter)/` },
      to: { path: '^(orchestrator|bench)/' },
    },
    ...ROLE_RULES,
    {
      name: 'roles-learn-no-scheme',
      comment:
        "a role runtime imports no scheme: a node process loads its scheme's parts by module when its config names them (core/scheme-parts.ts)",
      severity: 'error',
      from: { path: ROLES },
      to: { path: '^schemes/' },
    },
    {
      name: 'schemes-use-the-sdk-alone',
      comment:
        "a built-in scheme imports dcemu only through the SDK (sdk/node.ts, sdk/index.ts, sdk/study.ts), as an outside one does",
      severity: 'error',
      from: { path: '^schemes/' },
      to: { path: '^(core|topology|switch|host|arbiter|orchestrator|bench)/|^sdk/parts[.]ts$' },
    },
    {
      name: 'scheme-parts-use-the-node-sdk',
      comment:
        "what node processes run of a scheme (its parts and the files they share) imports the SDK's node side, sdk/node.ts: the rest would carry the orchestrator into every node's bundle",
      severity: 'error',
      from: { path: SCHEME_NODE_SIDE },
      to: { path: '^sdk/(index|study)[.]ts$' },
    },
    {
      name: 'node-process-parts-stay-out-of-the-orchestrator',
      comment: "what node processes load (a scheme's parts, the SDK's node side and loader) imports nothing of the orchestrator",
      severity: 'error',
      from: { path: '^schemes/[^/]+/parts[.]ts$|^sdk/(parts|node)[.]ts$' },
      to: { path: '^orchestrator/|^schemes/[^/]+/definition/' },
    },
    {
      name: 'scheme-shared-code-serves-every-part',
      comment: "a scheme's shared files (wire formats, configs, detectors) import none of its parts",
      severity: 'error',
      from: { path: '^schemes/[^/]+/[^/]+[.]ts$', pathNot: '/(experiments|parts|index)[.]ts$' },
      to: { path: '^schemes/[^/]+/(switch|host|arbiter|definition)/' },
    },
    {
      name: 'schemes-never-import-each-other',
      comment: "a scheme's code sits in its own folder: another scheme's is not its to import",
      severity: 'error',
      from: { path: '^schemes/([^/]+)/' },
      to: { path: '^schemes/', pathNot: '^schemes/$1/' },
    },
    {
      name: 'studies-sit-above-the-api',
      comment:
        'chaos, sweeps, compose and the paper experiments drive whole runs: the layers they use never import them',
      severity: 'error',
      from: { path: BELOW_API },
      to: { path: `${STUDIES}|^orchestrator/api[.]ts$` },
    },
    {
      name: 'nothing-imports-the-command-line',
      severity: 'error',
      from: { pathNot: COMMANDS },
      to: { path: COMMANDS },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
// the layers for test/layers.test.ts (every source file is in one), out of the keys the config's schema checks
Object.defineProperty(module.exports, 'layers', { value: LAYERS, enumerable: false });
