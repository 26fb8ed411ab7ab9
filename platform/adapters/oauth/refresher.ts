import { z } from 'zod';
import type { IntegrationProvider } from '../../core/oauth-catalog';
import { RefreshError, createSafeHttp, registerRefresher } from '../refreshers';
import { tokenRequest } from '../refreshers/oauth2';

// The refresher of connected accounts: the refresh-token grant at the token URL of the connection's
// integration, taken from the deployment's catalog (never from the credential's input, which a
// member may edit), so the operator's endpoints may be private addresses (the simulated provider on
// loopback). The credential's value names the integration too: a value never goes to another one.

/** Fixed id, beside the built-in refreshers (domain/credentials.ts REFRESHER_IDS). */
export const INTEGRATION_REFRESHER_ID = '0190f5a0-0000-7000-8000-000000000010';

const Input = z.strictObject({ integration: z.string().min(1).max(63) });

let catalog = new Map<string, IntegrationProvider>();
let timeoutMs = 15_000;

/** The catalog this process's refresher reads (set by the integrations service and the worker). */
export function useIntegrationCatalog(next: Map<string, IntegrationProvider>, refreshTimeoutMs: number): void {
  catalog = next;
  timeoutMs = refreshTimeoutMs;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

registerRefresher({
  id: INTEGRATION_REFRESHER_ID,
  kind: 'integration_oauth2',
  name: 'Integration connection (OAuth 2.0 refresh token)',
  description:
    "Refreshes a connected account's tokens at the token URL of its integration in the deployment's catalog; " +
    'the client secret comes from the catalog or, for organization clients, from the value.',
  inputSchema: Input,
  async refresh({ input, value, now }) {
    const { integration } = Input.parse(input);
    if (text(value.integration) !== integration) throw new RefreshError('The value belongs to another integration', false);
    const provider = catalog.get(integration);
    if (!provider) throw new RefreshError(`Integration ${integration} is not in this deployment's catalog`, false);
    const refreshToken = text(value.refresh_token);
    if (!refreshToken) throw new RefreshError('The connection has no refresh_token (invalid_grant): reconnect it', false);
    const clientId = text(value.client_id) ?? provider.client_id;
    const secret = text(value.client_secret) ?? provider.client_secret;
    const http = createSafeHttp({ allowPrivate: true, timeoutMs });
    const method = provider.token_auth_method === 'none' ? 'client_secret_post' : provider.token_auth_method;
    return tokenRequest(
      http,
      { token_url: provider.token_url, client_id: clientId, auth_method: method },
      provider.token_auth_method === 'none' ? undefined : secret,
      { grant_type: 'refresh_token', refresh_token: refreshToken },
      now,
    );
  },
});
