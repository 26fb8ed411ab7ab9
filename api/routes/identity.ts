import { z } from 'zod';
import * as identity from '../../services/identity';
import { orgOf, type RequestAuth } from '../auth/context';
import { scopesWithin } from '../auth/scopes';
import { issueToken } from '../auth/tokens';
import type { AppDeps } from '../deps';
import { forbidden } from '../errors';
import { clientAddress } from '../middleware/client-address';
import { reply, type Routes } from '../route';
import { ErrorBody, IdParams, authErrors, notFoundError, tooManyAttempts, validationError } from '../schemas/common';
import {
  CreateKeyBody,
  CreatedOrganizationKey,
  CreatedUserToken,
  EXCHANGE_BODY_LIMIT_BYTES,
  ExchangeBody,
  ExchangeResult,
  Jwks,
  KeyView,
  Me,
} from '../schemas/identity';

type CreateKey = z.output<typeof CreateKeyBody>;

/**
 * Scopes default to the session's own and may never exceed them: asking for one the session lacks is a
 * 403, never a silently narrower key. An expiry must lie ahead.
 */
function grantedScopes(body: CreateKey, auth: RequestAuth): string[] {
  const scopes = body.scopes ? [...new Set(body.scopes)] : auth.scopes;
  if (!scopesWithin(scopes, auth.scopes)) throw forbidden('Requested scopes exceed those of the session');
  return scopes;
}

/** What a new key records: the name, the granted scopes, the expiry and its creator. */
const keyRequest = (body: CreateKey, auth: RequestAuth): identity.KeyRequest => ({
  name: body.name,
  scopes: grantedScopes(body, auth),
  expiresAt: body.expires_at ? new Date(body.expires_at) : null,
  userId: auth.userId,
  userExternalId: auth.userExternalId,
});

/**
 * An organization's keys are created, listed and revoked by its key admins (`api:manage` or
 * `organizations:manage`), whatever the token kind lists and revokes: a read-only caller never mints a
 * key, never revokes one, and never sees the key ids a wrong-secret flood could aim at.
 */
const KEY_ADMIN = { scope: 'keyAdmin' } as const;
const KEY_ADMIN_TEXT = 'Needs `api:manage` or `organizations:manage` (403 `Insufficient permissions` otherwise).';

const revokeResponses = { 204: { description: 'Revoked' }, ...authErrors, ...notFoundError } as const;

export function registerIdentityRoutes(routes: Routes, deps: AppDeps): void {
  const { verifier } = deps;
  const futureExpiry = CreateKeyBody.refine((b) => !b.expires_at || new Date(b.expires_at).getTime() > Date.now(), {
    message: 'expires_at must be in the future',
    path: ['expires_at'],
  });
  /** After a revocation: drop the verifier's cached results for the key, then 204. */
  const revoked = (id: string) => {
    verifier.forget(id);
    return reply(204);
  };

  routes.add({
    method: 'post',
    path: '/organization-pats',
    tag: 'Identity',
    summary: 'Create an organization API key (ak_), shown once',
    description: `An identity-provider session only. ${KEY_ADMIN_TEXT} The key carries the requested \`scopes\` (default: the session's); asking for a scope the session does not hold is 403 \`Requested scopes exceed those of the session\`, and nothing is created. \`expires_at\` (optional, in the future) ends the key: past it the key is 401.`,
    auth: { session: true, ...KEY_ADMIN },
    body: futureExpiry,
    responses: {
      200: { description: 'Created; pat_key is returned only here', schema: CreatedOrganizationKey },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) =>
      reply(200, await identity.createOrganizationKey(deps, orgOf(auth), keyRequest(body, auth), await issueToken('organization'))),
  });

  routes.add({
    method: 'get',
    path: '/organization-pats',
    tag: 'Identity',
    summary: "List the organization's API keys (never their secrets), with their scopes and expiry",
    description: KEY_ADMIN_TEXT,
    auth: KEY_ADMIN,
    responses: { 200: { description: 'Keys, newest first', schema: z.array(KeyView) }, ...authErrors },
    handler: async ({ auth }) => identity.listOrganizationKeys(deps, orgOf(auth)),
  });

  routes.add({
    method: 'delete',
    path: '/organization-pats/{id}',
    tag: 'Identity',
    summary: 'Revoke an organization API key',
    description: KEY_ADMIN_TEXT,
    auth: KEY_ADMIN,
    params: IdParams,
    responses: revokeResponses,
    handler: async ({ params, auth }) => {
      await identity.revokeOrganizationKey(deps, orgOf(auth), params.id);
      return revoked(params.id);
    },
  });

  routes.add({
    method: 'post',
    path: '/user-pats',
    tag: 'Identity',
    summary: 'Create a personal access token (pat_), shown once',
    description:
      "An identity-provider session only; any member may make one for themselves. The token carries the requested `scopes` (default: the session's), never more (403 `Requested scopes exceed those of the session`), and in each organization only what its user holds there. `expires_at` (optional, in the future) ends it: past it the token is 401.",
    auth: { session: true, org: 'optional' },
    body: futureExpiry,
    responses: {
      200: { description: 'Created; token is returned only here', schema: CreatedUserToken },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(200, await identity.createUserToken(deps, keyRequest(body, auth), await issueToken('user'))),
  });

  routes.add({
    method: 'get',
    path: '/user-pats',
    tag: 'Identity',
    summary: "List the caller's personal access tokens",
    auth: { org: 'optional', user: true },
    responses: { 200: { description: 'Tokens, newest first', schema: z.array(KeyView) }, ...authErrors },
    handler: async ({ auth }) => identity.listUserTokens(deps, auth.userId),
  });

  routes.add({
    method: 'delete',
    path: '/user-pats/{id}',
    tag: 'Identity',
    summary: 'Revoke a personal access token',
    auth: { org: 'optional', user: true },
    params: IdParams,
    responses: revokeResponses,
    handler: async ({ params, auth }) => {
      await identity.revokeUserToken(deps, auth.userId, params.id);
      return revoked(params.id);
    },
  });

  routes.add({
    method: 'post',
    path: '/pat/exchange',
    tag: 'Identity',
    summary: 'Exchange an ak_ key or pat_ token for a short-lived access token',
    auth: 'public',
    body: ExchangeBody,
    bodyLimitBytes: EXCHANGE_BODY_LIMIT_BYTES,
    responses: {
      200: { description: 'Access token', schema: ExchangeResult },
      401: { description: 'Invalid, expired or revoked', schema: ErrorBody },
      ...validationError,
      ...tooManyAttempts,
    },
    handler: async ({ body, ctx }) => verifier.exchange(body.token, { address: clientAddress(ctx) }),
  });

  routes.add({
    method: 'get',
    path: '/me',
    tag: 'Identity',
    summary: 'The caller: user, active organization, token kind and scopes',
    auth: { org: 'optional' },
    responses: { 200: { description: 'The caller', schema: Me }, ...authErrors },
    // Answered at once: nothing here waits (api/maybe-promise.ts).
    handler: ({ auth }) => ({
      user: { id: auth.userId, external_id: auth.userExternalId },
      organization: auth.orgId ? { id: auth.orgId, external_id: auth.orgExternalId! } : null,
      token_kind: auth.kind,
      scopes: auth.scopes,
    }),
  });

  if (deps.devIdp) {
    const jwks = { keys: [deps.devIdp.publicJwk as Record<string, unknown>] };
    routes.add({
      method: 'get',
      path: '/.well-known/jwks.json',
      tag: 'Identity',
      summary: "The development identity provider's public keys",
      auth: 'public',
      responses: { 200: { description: 'JWKS', schema: Jwks } },
      handler: async () => jwks,
    });
  }
}
