import * as credentialsDb from '../../db/credentials';
import * as db from '../../db/integrations';
import { publicBaseUrl, type Config } from '../../platform/core/config';
import { loadCatalog, requestedScopes, type IntegrationProvider } from '../../platform/core/oauth-catalog';
import type { ClientSecrets } from '../../platform/adapters/oauth/client';
import { useIntegrationCatalog } from '../../platform/adapters/oauth/refresher';
import { readCredentialValue } from '../credentials/values';
import type { ServiceDeps } from '../deps';
import { iso } from '../views';

// Integrations: the providers' catalog, the OAuth client each is consented with, and the organization's
// redirect allowlist. Connect tokens and consent are in ./connect.ts, connected accounts in ./connections.ts.

const catalogs = new Map<string, Map<string, IntegrationProvider>>();

/** The deployment's catalog (cached per configuration); the refresher of this process reads the same one. */
export function catalogOf(config: Pick<Config, 'INTEGRATION_PROVIDERS' | 'SIMULATED_OAUTH_ISSUER' | 'CREDENTIAL_REFRESH_TIMEOUT_MS'>) {
  const key = `${config.INTEGRATION_PROVIDERS ?? ''}|${config.SIMULATED_OAUTH_ISSUER ?? ''}`;
  let catalog = catalogs.get(key);
  if (!catalog) {
    catalog = loadCatalog(config);
    catalogs.set(key, catalog);
  }
  useIntegrationCatalog(catalog, config.CREDENTIAL_REFRESH_TIMEOUT_MS);
  return catalog;
}

export function listIntegrations(deps: Pick<ServiceDeps, 'config'>) {
  return {
    data: [...catalogOf(deps.config).values()].map((p) => ({
      key: p.key,
      name: p.name,
      description: p.description,
      simulated: p.simulated,
      scopes: p.scopes.map((s) => ({ name: s.name, description: s.description })),
      default_scopes: requestedScopes(p),
      client_source: p.client_source,
      supports_revocation: p.revocation_url !== undefined,
    })),
  };
}

// ---- redirect allowlist ------------------------------------------------------------------------------

const ownOrigin = (config: Config) => new URL(publicBaseUrl(config)).origin;

export async function getSettings(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string) {
  const row = await db.getAllowedOrigins(deps.sql, orgId);
  return { allowed_redirect_origins: row?.origins ?? [ownOrigin(deps.config)], updated_at: iso(row?.updated_at ?? null) };
}

export async function putSettings(deps: Pick<ServiceDeps, 'sql'>, orgId: string, actor: string, origins: string[]) {
  const normalized = [...new Set(origins.map((o) => new URL(o).origin))];
  const row = await db.putAllowedOrigins(deps.sql, orgId, normalized, actor);
  return { allowed_redirect_origins: row.origins, updated_at: row.updated_at.toISOString() };
}

export async function clientFor(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  p: IntegrationProvider,
): Promise<ClientSecrets | undefined> {
  if (p.client_source === 'config') return { clientId: p.client_id!, clientSecret: p.client_secret };
  // The organization's own OAuth client: a workflow credential named integration-client:<key>.
  const name = `integration-client:${p.key}`;
  const { rows } = await credentialsDb.listCredentials(deps.sql, orgId, { name }, { limit: 20 });
  const row = rows.find((r) => r.name.toLowerCase() === name);
  const value = row ? await readCredentialValue(deps, orgId, row.id) : null;
  const clientId = typeof value?.client_id === 'string' ? value.client_id : undefined;
  if (!clientId) return undefined;
  return { clientId, clientSecret: typeof value?.client_secret === 'string' ? value.client_secret : undefined };
}
