import { z } from 'zod';

// The catalog of OAuth 2.0 integrations a deployment offers: `INTEGRATION_PROVIDERS` (a JSON array)
// when set; otherwise the built-in `simulated` provider when `SIMULATED_OAUTH_ISSUER` names the
// loopback server `npm start` runs; otherwise empty. Provider URLs come from the operator, never from a
// caller, so requests to them may reach private addresses.

const Key = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be lower-case letters, digits, _ or -');
const HttpUrl = z.url({ protocol: /^https?$/ });

const ProviderSchema = z.strictObject({
  key: Key,
  name: z.string().min(1).max(200),
  description: z.string().max(1000).default(''),
  /** The authorization server's issuer (checked against `iss` in answers and ID tokens); default: the authorization URL's origin. */
  issuer: HttpUrl.optional(),
  authorization_url: HttpUrl,
  token_url: HttpUrl,
  revocation_url: HttpUrl.optional(),
  userinfo_url: HttpUrl.optional(),
  /** Every scope the integration may ask for, with what it grants. */
  scopes: z
    .array(z.strictObject({ name: z.string().min(1).max(200), description: z.string().max(500).default('') }))
    .max(100)
    .default([]),
  /** Scopes asked for on every connection (default: all listed). */
  default_scopes: z.array(z.string().min(1).max(200)).max(100).optional(),
  /** `config`: client_id (and secret) below; `organization`: from the organization's workflow credential `integration-client:<key>`. */
  client_source: z.enum(['config', 'organization']).default('config'),
  client_id: z.string().min(1).max(500).optional(),
  client_secret: z.string().min(1).max(2000).optional(),
  token_auth_method: z.enum(['client_secret_basic', 'client_secret_post', 'none']).default('client_secret_basic'),
  /** Extra authorization request parameters (e.g. access_type=offline). */
  authorization_params: z.record(z.string(), z.string().max(500)).default({}),
});

export type IntegrationProvider = z.output<typeof ProviderSchema> & { simulated: boolean; issuer: string };

/** The client id of the simulated provider's one client (public: PKCE protects it). */
export const SIMULATED_CLIENT_ID = 'voice-crm-simulated';

/** Scopes the simulated provider grants, with what each stands for. */
export const SIMULATED_SCOPES = [
  { name: 'openid', description: 'Sign in with the simulated account and read its identifier' },
  { name: 'profile', description: 'Read the simulated account name' },
  { name: 'email', description: 'Read the simulated account email address' },
  { name: 'contacts.read', description: 'Read the simulated address book (nothing real is shared)' },
  { name: 'calendar.read', description: 'Read the simulated calendar (nothing real is shared)' },
];

export function simulatedProvider(issuer: string): IntegrationProvider {
  const base = issuer.replace(/\/$/, '');
  return {
    key: 'simulated',
    name: 'Simulated provider (built in)',
    description:
      'A real OAuth 2.0 / OpenID Connect server the service runs on loopback, so the connect flow works out of the box; it grants nothing outside this machine.',
    issuer: base,
    authorization_url: `${base}/auth`,
    token_url: `${base}/token`,
    revocation_url: `${base}/token/revocation`,
    userinfo_url: `${base}/me`,
    scopes: SIMULATED_SCOPES,
    default_scopes: SIMULATED_SCOPES.map((s) => s.name),
    client_source: 'config',
    client_id: SIMULATED_CLIENT_ID,
    client_secret: undefined,
    token_auth_method: 'none',
    authorization_params: {},
    simulated: true,
  };
}

export class CatalogError extends Error {}

/** The catalog from configuration; a malformed INTEGRATION_PROVIDERS throws CatalogError naming the fault. */
export function loadCatalog(config: { INTEGRATION_PROVIDERS?: string; SIMULATED_OAUTH_ISSUER?: string }): Map<string, IntegrationProvider> {
  const catalog = new Map<string, IntegrationProvider>();
  if (config.INTEGRATION_PROVIDERS) {
    let json: unknown;
    try {
      json = JSON.parse(config.INTEGRATION_PROVIDERS);
    } catch {
      throw new CatalogError('INTEGRATION_PROVIDERS must be a JSON array of providers');
    }
    const parsed = z.array(ProviderSchema).max(200).safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new CatalogError(`INTEGRATION_PROVIDERS ${issue.path.join('.')}: ${issue.message}`);
    }
    for (const p of parsed.data) {
      if (catalog.has(p.key)) throw new CatalogError(`INTEGRATION_PROVIDERS: key ${p.key} is listed twice`);
      if (p.client_source === 'config' && !p.client_id)
        throw new CatalogError(`INTEGRATION_PROVIDERS ${p.key}: client_id is required when client_source is config`);
      if (p.client_source === 'config' && p.token_auth_method !== 'none' && !p.client_secret)
        throw new CatalogError(`INTEGRATION_PROVIDERS ${p.key}: client_secret is required unless token_auth_method is none`);
      catalog.set(p.key, { ...p, issuer: p.issuer ?? new URL(p.authorization_url).origin, simulated: false });
    }
    return catalog;
  }
  if (config.SIMULATED_OAUTH_ISSUER) catalog.set('simulated', simulatedProvider(config.SIMULATED_OAUTH_ISSUER));
  return catalog;
}

/** The scopes a connection asks for. */
export const requestedScopes = (p: IntegrationProvider): string[] => p.default_scopes ?? p.scopes.map((s) => s.name);
