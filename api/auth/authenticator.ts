import type Koa from 'koa';
import { badRequest, forbidden, unauthorized } from '../errors';
import { clientAddress } from '../middleware/client-address';
import type { Authenticator, RequestAuth } from './context';
import { scopesWithin } from './scopes';
import type { TokenVerifier, VerifiedToken } from './verifier';

export const SERVICE_ORG_HEADER = 'X-Service-Org';
const BEARER = /^Bearer\s+(\S+)\s*$/i;
// Headers are read from Node's own (lower-cased) record: Koa's ctx.get goes through two delegations for each.
const SERVICE_ORG = SERVICE_ORG_HEADER.toLowerCase();

/** The token's scopes, limited to what its user holds in the active organization where that applies. */
function scopesIn(token: VerifiedToken, orgExternalId: string | null): string[] {
  if (!orgExternalId || !token.orgCeilings) return token.scopes;
  const ceiling = token.orgCeilings.get(orgExternalId) ?? [];
  return token.scopes.filter((scope) => scopesWithin([scope], ceiling));
}

/** Bearer token → RequestAuth, applying the X-Service-Org rules of the API contract. */
export function createAuthenticator(verifier: TokenVerifier): Authenticator {
  return {
    authenticate(ctx: Koa.Context): RequestAuth | Promise<RequestAuth> {
      const match = BEARER.exec(ctx.req.headers.authorization ?? '');
      if (!match) throw unauthorized('Not authenticated');
      const presenter = { address: clientAddress(ctx) };
      const cached = verifier.cached(match[1]!, presenter);
      if (cached) return authOf(ctx, cached);
      return verifier.verify(match[1]!, presenter).then((token) => authOf(ctx, token));
    },
  };
}

function authOf(ctx: Koa.Context, token: VerifiedToken): RequestAuth {
  if (token.expiresAt <= Date.now()) throw unauthorized('Token expired');
  const requested = ((ctx.req.headers[SERVICE_ORG] as string | undefined) ?? '').trim();
  let orgExternalId = token.defaultOrg;
  if (requested) {
    if (token.kind === 'organization_key') throw badRequest(`${SERVICE_ORG_HEADER} is not accepted with an organization API key`);
    if (!token.orgs.has(requested)) throw forbidden('Organization not permitted for this token');
    orgExternalId = requested;
  } else if (token.kind === 'user_token') {
    orgExternalId = null; // a pat_ token names its organization on every request
  }
  return {
    kind: token.kind,
    userId: token.userId,
    userExternalId: token.userExternalId,
    orgId: orgExternalId ? (token.orgs.get(orgExternalId) ?? null) : null,
    orgExternalId,
    scopes: scopesIn(token, orgExternalId),
    keyId: token.keyRowId,
  };
}
