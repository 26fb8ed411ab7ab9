import { catalogOf } from '../services/integrations';
import type { ActivityDeps } from './deps';

// Integrations run no activity of their own: their connections refresh through the credentials area's
// refresh workflow. Loading the service here registers, in the worker, the integration refresher (fed
// the deployment's catalog) and the hook that moves a connection whose grant is gone to needs_reconnect.
export function createIntegrationActivities(deps: ActivityDeps) {
  catalogOf(deps.config);
  return {};
}
