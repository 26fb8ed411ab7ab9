/**
 * The import direction of the layers (README "Architecture"): api → services → db → platform, every
 * layer → domain; workflows see only domain/ and activity types. Rules are by folder, so every area
 * added under these folders is checked without touching this file. Run by `npm run deps` (in `npm test`).
 */
const layer = (name) => `^${name}/`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A circle of runtime imports hides which module depends on which; cut it at a layer boundary.',
      from: { path: '^(api|services|domain|db|activities|workflows|platform|worker)/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'domain-imports-nothing-of-ours',
      severity: 'error',
      comment: 'domain/ holds pure rules and state tables; it imports only other domain/ files.',
      from: { path: layer('domain') },
      to: { path: '^(api|services|db|activities|workflows|platform|worker|scripts|test)/' },
    },
    {
      name: 'workflows-import-domain-and-activity-types-only',
      severity: 'error',
      comment: 'Workflow code is deterministic: it imports domain/, other workflow files, and activity types.',
      from: { path: layer('workflows') },
      to: { path: '^(api|services|db|platform|worker|scripts)/' },
    },
    {
      name: 'workflows-take-activity-types-only',
      severity: 'error',
      from: { path: layer('workflows') },
      to: { path: layer('activities'), dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'nothing-imports-api',
      severity: 'error',
      comment: 'api/ is the outermost layer: routes call services, never the other way round.',
      from: { path: '^(services|domain|db|activities|workflows|platform|worker)/' },
      to: { path: layer('api') },
    },
    {
      name: 'routes-call-services',
      severity: 'error',
      comment: 'A route declares and makes a one-line call into its service; SQL, workflows and activities sit below.',
      from: { path: '^api/(routes|schemas)/' },
      to: { path: '^(db|activities|workflows)/' },
    },
    {
      name: 'activities-are-adapters',
      severity: 'error',
      comment: 'An activity is a one-line call into its service plus its retry classification; SQL and transactions live in services/.',
      from: { path: layer('activities') },
      to: { path: layer('db') },
    },
    {
      name: 'http-auth-goes-through-services',
      severity: 'error',
      comment: 'The token verifier reads keys, proofs and memberships through services/token-identity.ts, never db/.',
      from: { path: '^api/(auth|middleware)/' },
      to: { path: layer('db'), pathNot: '^db/pg-errors\\.ts$' },
    },
    {
      name: 'services-start-workflows-by-reference',
      severity: 'error',
      comment:
        'Services name a workflow by its reference in workflows/<area>-messages.ts (services/workflow-client.ts); workflow code stays out of the API bundle.',
      from: { path: layer('services') },
      to: { path: layer('workflows'), pathNot: '^workflows/([a-z-]+-messages|workflow-ref)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'services-do-not-import-activities',
      severity: 'error',
      comment: 'Activities call services; a service never reaches back into an activity (a workflow input type is fine).',
      from: { path: layer('services') },
      to: { path: layer('activities'), dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'db-holds-sql-only',
      severity: 'error',
      comment: 'db/ is below services and activities; it imports domain/, platform/ and other db/ files.',
      from: { path: layer('db') },
      to: { path: '^(services|activities|workflows|worker)/' },
    },
    {
      name: 'platform-is-the-bottom',
      severity: 'error',
      comment: 'platform/ (config, ids, storage, outside adapters) sees domain/ and the postgres.js client type only.',
      from: { path: layer('platform') },
      to: { path: '^(services|activities|workflows|worker)/' },
    },
    {
      name: 'platform-sees-only-the-db-client',
      severity: 'error',
      from: { path: layer('platform') },
      to: { path: layer('db'), pathNot: '^db/client\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.data|\\.tools|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
