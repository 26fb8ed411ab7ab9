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
      from: { path: '^(server|api|services|domain|db|activities|workflows|platform|worker|dev-servers|voice)/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'voice-reaches-the-crm-through-services',
      severity: 'error',
      comment:
        'The conversation engine (voice/) is a process of its own: it reaches the CRM through services/ and names workflows by their messages, never through the API, SQL or workflow code.',
      from: { path: layer('voice') },
      to: {
        path: '^(server|api|db|activities|worker|dev-servers)/|^workflows/(?!([a-z-]+-messages|workflow-ref)\\.ts$)',
        // The process's composition root opens its own database pool, as the worker's does.
        pathNot: '^db/client\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'nothing-imports-the-engine',
      severity: 'error',
      comment: 'No other process of the service imports the conversation engine.',
      from: { path: '^(server|api|services|domain|db|activities|workflows|platform|worker|dev-servers)/' },
      to: { path: layer('voice') },
    },
    {
      name: 'domain-imports-nothing-of-ours',
      severity: 'error',
      comment: 'domain/ holds pure rules and state tables; it imports only other domain/ files.',
      from: { path: layer('domain') },
      to: { path: '^(server|api|services|db|activities|workflows|platform|worker|dev-servers|scripts|test)/' },
    },
    {
      name: 'workflows-import-domain-and-activity-types-only',
      severity: 'error',
      comment: 'Workflow code is deterministic: it imports domain/, other workflow files, and activity types.',
      from: { path: layer('workflows') },
      to: { path: '^(server|api|services|db|platform|worker|dev-servers|scripts)/' },
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
      from: { path: '^(services|domain|db|activities|workflows|platform|worker|dev-servers)/' },
      to: { path: layer('api') },
    },
    {
      name: 'server-is-the-root',
      severity: 'error',
      comment: 'server/ composes the API process (deps, startup, listening); only scripts, tests and benches import it.',
      from: { path: '^(api|services|domain|db|activities|workflows|platform|worker|dev-servers)/' },
      to: { path: layer('server') },
    },
    {
      name: 'dev-servers-stay-out-of-the-service',
      severity: 'error',
      comment:
        'dev-servers/ (embedded Postgres, the S3 server, the embeddings server, the simulated OAuth provider) run beside the service in development, scripts and tests; no process of the service imports them.',
      from: { path: '^(server|api|services|domain|db|activities|workflows|platform|worker)/' },
      to: { path: layer('dev-servers') },
    },
    {
      name: 'platform-core-imports-no-adapter',
      severity: 'error',
      comment:
        'platform/core/ (config, logging, ids, secrets, the Temporal client) is what every adapter family builds on, never the reverse.',
      from: { path: '^platform/core/' },
      to: { path: '^platform/adapters/' },
    },
    {
      name: 'api-calls-services',
      severity: 'error',
      comment:
        'A route declares and makes a one-line call into its service; SQL, workflows and activities sit below. The whole of api/ (auth, middleware, schemas) goes through services/ too.',
      from: { path: layer('api') },
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
