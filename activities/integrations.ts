import { catalogOf } from '../services/integrations/catalog';
// Loading it registers the hook that moves a connection whose grant is gone to needs_reconnect.
import '../services/integrations/connections';
import type { ActivityDeps } from './deps';

// Integrations run no activity of their own: their connections refresh through the credentials area's
// refresh workflow. The worker registers here the integration refresher (fed the deployment's catalog)
// and, through the import above, the connections' refresh failure hook.
export function createIntegrationActivities(deps: ActivityDeps) {
  catalogOf(deps.config);
  return {};
}

/** What the integrations workflows may call: their `proxyActivities<IntegrationActivities>` type. */
export type IntegrationActivities = ReturnType<typeof createIntegrationActivities>;
