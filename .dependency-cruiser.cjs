/**
 * Who may import whom (docs/ARCHITECTURE.md, "Roles"). `npm run lint` runs it, so a wrong-way
 * import fails CI. Type-only imports count: a type that crosses a boundary couples the two sides too.
 */
const WORKFLOW_SAFE_PACKAGES = '^node_modules/@temporalio/(workflow|common|workflow-streams)/';

/**
 * The contract's types by subject (src/contract/types/<name>.ts), lowest layer first. A file may
 * import only files of lower layers: not its own layer's (so siblings stay independent) and not a
 * higher one's, which keeps the folder free of circles. src/contract/types.ts, the barrel, sits
 * above them all. A new file must be given a layer here: an unlisted one is refused.
 */
const CONTRACT_TYPE_LAYERS = [
  ['base'],
  ['spend', 'models', 'approvals', 'callbacks', 'sandbox', 'mcp', 'evals'],
  ['messages'],
  ['guardrails', 'compaction'],
  ['agents', 'turns'],
  ['tools'],
  ['hooks', 'events', 'conversation'],
];
const contractTypeFiles = (names) => `^src/contract/types/(${names.join('|')})\\.ts$`;
const contractTypeLayerRules = CONTRACT_TYPE_LAYERS.map((layer, index) => ({
  name: `contract-types-layer-${index}`,
  comment: `src/contract/types/ layer ${index} (${layer.join(', ')}) imports only lower layers (${
    CONTRACT_TYPE_LAYERS.slice(0, index).flat().join(', ') || 'none'
  }): see CONTRACT_TYPE_LAYERS.`,
  severity: 'error',
  from: { path: contractTypeFiles(layer) },
  to: {
    path: '^src/contract/types/',
    ...(index > 0 ? { pathNot: contractTypeFiles(CONTRACT_TYPE_LAYERS.slice(0, index).flat()) } : {}),
  },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'An import cycle makes load order matter and hides which module owns what.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'contract-imports-only-contract',
      comment:
        'src/contract/ is the workflow-safe contract: types, message definitions, settings, limits. It imports nothing else of the project.',
      severity: 'error',
      from: { path: '^src/contract/' },
      to: { path: '^(src|workflows|activities|tools)/', pathNot: '^src/contract/' },
    },
    ...contractTypeLayerRules,
    {
      name: 'contract-types-have-a-layer',
      comment:
        'Every file of src/contract/types/ is placed in CONTRACT_TYPE_LAYERS, so the layer rules see it.',
      severity: 'error',
      from: {},
      to: { path: '^src/contract/types/', pathNot: contractTypeFiles(CONTRACT_TYPE_LAYERS.flat()) },
    },
    {
      name: 'contract-types-import-only-contract-types',
      comment:
        "src/contract/types/ is the contract's bottom: the rest of src/contract/ (settings, protocol, definitions) builds on it, never the other way.",
      severity: 'error',
      from: { path: '^src/contract/types/' },
      to: { path: '^(src|workflows|activities|tools)/', pathNot: '^src/contract/types/' },
    },
    {
      name: 'contract-types-barrel-is-for-the-entry',
      comment:
        "src/contract/types.ts re-exports the contract for the package's entry (src/index.ts); inside the project a module imports the subject file it needs, so the layers stay visible. `node scripts/contractImports.mjs` rewrites such imports.",
      severity: 'error',
      from: { pathNot: '^src/index\\.ts$' },
      to: { path: '^src/contract/types\\.ts$' },
    },
    {
      name: 'contract-types-no-cycles',
      comment: 'The contract types are layered: no circle among them, even through another module.',
      severity: 'error',
      from: { path: '^src/contract/types/' },
      to: { path: '^src/contract/types/', circular: true },
    },
    {
      name: 'contract-is-workflow-safe',
      comment:
        'Workflow code imports the contract, so it may use no Node.js module and only workflow-safe packages.',
      severity: 'error',
      from: { path: '^src/contract/' },
      to: {
        dependencyTypes: ['core', 'npm', 'npm-peer', 'npm-dev', 'npm-optional'],
        pathNot: WORKFLOW_SAFE_PACKAGES,
      },
    },
    {
      name: 'workflows-import-only-contract',
      comment:
        'Workflow code is deterministic: it imports only the contract, itself and @temporalio/workflow.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { path: '^(src|activities|tools)/', pathNot: '^src/contract/' },
    },
    {
      name: 'workflows-are-workflow-safe',
      severity: 'error',
      from: { path: '^workflows/' },
      to: {
        dependencyTypes: ['core', 'npm', 'npm-peer', 'npm-dev', 'npm-optional'],
        pathNot: WORKFLOW_SAFE_PACKAGES,
      },
    },
    {
      name: 'activities-never-import-workflows',
      comment: 'Activities run on the worker; they reach the workflow only through the contract.',
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: '^(workflows|src/client|src/cli)/' },
    },
    {
      name: 'activities-never-import-the-worker',
      comment:
        'What an activity needs (the registry, validation, the sandbox, the models) lives in activities/; src/worker/ builds workers from it, one way.',
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: '^src/worker/' },
    },
    {
      name: 'activity-layers-point-down',
      comment:
        'Inside activities/: models/ and sandbox/ use nothing above them; registry/ loads tools into the sandbox; selfWriting/ writes tools into the registry; the activities (activities/*.ts) use them all.',
      severity: 'error',
      from: { path: '^activities/(models|sandbox)/' },
      to: { path: '^activities/', pathNot: '^activities/$1/' },
    },
    {
      name: 'registry-uses-only-the-sandbox',
      severity: 'error',
      from: { path: '^activities/registry/' },
      to: { path: '^activities/', pathNot: '^activities/(registry|sandbox)/' },
    },
    {
      name: 'self-writing-uses-the-registry-and-sandbox',
      severity: 'error',
      from: { path: '^activities/selfWriting/' },
      to: { path: '^activities/', pathNot: '^activities/(selfWriting|registry|sandbox)/' },
    },
    {
      name: 'worker-never-imports-workflows-or-client',
      comment: 'The worker bundles workflows/ by path; it never imports workflow code or the client.',
      severity: 'error',
      from: { path: '^src/worker/' },
      to: { path: '^(workflows|src/client|src/cli)/' },
    },
    {
      name: 'client-never-imports-worker',
      comment: 'A client loads no worker code: no activities, no worker, no workflow code.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^(activities|workflows|src/worker|src/cli)/' },
    },
    {
      name: 'infrastructure-imports-only-contract',
      comment: 'Connection, codec, storage, server and tracing serve every role and depend on none.',
      severity: 'error',
      from: { path: '^src/infrastructure/' },
      to: { path: '^(src|workflows|activities|tools)/', pathNot: '^src/(contract|infrastructure)/' },
    },
    {
      name: 'client-entry-loads-no-worker-code',
      comment:
        '`yiem-agent` is what clients and tool files import: no worker, activity or CLI code (currentToolCall lives in src/infrastructure).',
      severity: 'error',
      from: { path: '^src/index\\.ts$' },
      to: { path: '^(activities|src/worker|src/cli)/' },
    },
    {
      name: 'cli-uses-the-worker-and-client-apis',
      comment:
        'The CLI starts workers and talks to conversations through src/worker and src/client, like a user.',
      severity: 'error',
      from: { path: '^src/cli/' },
      // Except the model settings' rules (defaults, the endpoint's description), which `yiem doctor`
      // and `--help` state as a worker resolves them.
      to: { path: '^(workflows|activities)/', pathNot: '^activities/models/settings\\.ts$' },
    },
    {
      name: 'testing-imports-nothing',
      comment:
        '`yiem-agent/testing` (the scripted model) stands alone, so a test can use it without the framework.',
      severity: 'error',
      from: { path: '^src/testing/' },
      to: { path: '^(src|workflows|activities|tools)/', pathNot: '^src/testing/' },
    },
    {
      name: 'console-imports-only-types-of-the-project',
      comment:
        "src/console/ is the console's page, run in the browser: of the node side it may import types only (the JSON API's, the contract's), which the build erases.",
      severity: 'error',
      from: { path: '^src/console/' },
      to: {
        path: '^(src|workflows|activities|tools)/',
        pathNot: '^src/console/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'console-uses-browser-packages-only',
      comment:
        'The page is bundled for the browser and works offline: React, the AI SDK and nothing of Node.js.',
      severity: 'error',
      from: { path: '^src/console/' },
      to: {
        dependencyTypes: ['core', 'npm', 'npm-peer', 'npm-dev', 'npm-optional', 'npm-no-pkg', 'npm-unknown'],
        pathNot:
          '^node_modules/(react|react-dom|scheduler|ai|@ai-sdk/(react|provider-utils|provider|gateway))/',
      },
    },
    {
      name: 'nothing-imports-the-console-page',
      comment: 'The page is built by Vite and served as files; no node-side module imports it.',
      severity: 'error',
      from: { path: '^(src|workflows|activities|tools)/', pathNot: '^src/console/' },
      to: { path: '^src/console/' },
    },
    {
      name: 'builtin-tools-import-the-package',
      comment: "Built-in tools import what a user's tool imports: `yiem-agent`, never an internal path.",
      severity: 'error',
      from: { path: '^tools/' },
      to: { path: '^(src|workflows|activities)/', dependencyTypes: ['local'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Worktrees that link node_modules from another checkout still see it as node_modules/.
    preserveSymlinks: true,
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['yiem-source', 'import', 'types', 'default'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
