import { z } from 'zod';
import * as identity from '../../db/identity';
import type { ApiKeyRow } from '../../db/identity';
import type { RequestAuth } from '../auth/context';
import { hasScopeGroup, scopesWithin } from '../auth/scopes';
import { issueToken } from '../auth/tokens';
import type { AppDeps } from '../deps';
import { forbidden, notFound } from '../errors';
import { reply, type Routes } from '../route';
import { ErrorBody, IdParams, authErrors, notFoundError, validationError } from '../schemas/common';
import { CreateKeyBody, CreatedOrganizationKey, CreatedUserToken, ExchangeBody, ExchangeResult, Jwks, KeyView, Me } from '../schemas/identity';

type CreateKey = z.output<typeof CreateKeyBody>;

function keyView(row: ApiKeyRow, creatorExternalId: string): z.output<typeof KeyView> {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    key_id: row.key_id,
    organization_id: row.org_id,
    scopes: row.scopes,
    expires_at: row.expires_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    created_by: `user:${creatorExternalId}`,
  };
}

/** Scopes default to the session's own and may never exceed them; an expiry must lie ahead. */
function grantedScopes(body: CreateKey, auth: RequestAuth): string[] {
  const scopes = body.scopes ? [...new Set(body.scopes)] : auth.scopes;
  if (!scopesWithin(scopes, auth.scopes)) throw forbidden('Requested scopes exceed those of the session');
  return scopes;
}

function expiry(body: CreateKey): Date | null {
  if (!body.expires_at) return null;
  return new Date(body.expires_at);
}

/**
 * An organization's keys are listed with a CRM read scope and revoked with a CRM manage scope (a
 * read-only caller never revokes), or with Org admin, whatever the token kind.
 */
function assertCanManageOrgKeys(auth: RequestAuth, access: 'read' | 'manage'): void {
  const group = access === 'read' ? 'crmRead' : 'crmManage';
  if (!hasScopeGroup(auth.scopes, group) && !hasScopeGroup(auth.scopes, 'orgAdmin')) throw forbidden('Insufficient permissions');
}

/** User tokens are listed and revoked by their user, through a session or a pat_ token. */
function assertUser(auth: RequestAuth): void {
  if (auth.kind === 'organization_key') throw forbidden('User tokens belong to users; an organization API key has none');
}

export function registerIdentityRoutes(routes: Routes, deps: AppDeps): void {
  const { sql, verifier } = deps;
  const futureExpiry = CreateKeyBody.refine((b) => !b.expires_at || new Date(b.expires_at).getTime() > Date.now(), {
    message: 'expires_at must be in the future',
    path: ['expires_at'],
  });

  routes.add({
    method: 'post',
    path: '/organization-pats',
    tag: 'Identity',
    summary: 'Create an organization API key (ak_), shown once',
    auth: { session: true },
    body: futureExpiry,
    responses: { 200: { description: 'Created; pat_key is returned only here', schema: CreatedOrganizationKey }, ...authErrors, ...validationError },
    handler: async ({ body, auth }) => {
      const scopes = grantedScopes(body, auth);
      const issued = await issueToken('organization');
      const row = await identity.insertApiKey(sql, {
        kind: 'organization',
        key_id: issued.keyId,
        secret_hash: issued.secretHash,
        org_id: auth.orgId,
        user_id: auth.userId,
        name: body.name,
        scopes,
        expires_at: expiry(body),
      });
      return reply(200, { ...keyView(row, auth.userExternalId), pat_key: issued.token });
    },
  });

  routes.add({
    method: 'get',
    path: '/organization-pats',
    tag: 'Identity',
    summary: "List the organization's API keys (never their secrets)",
    auth: {},
    responses: { 200: { description: 'Keys, newest first', schema: z.array(KeyView) }, ...authErrors },
    handler: async ({ auth }) => {
      assertCanManageOrgKeys(auth, 'read');
      const rows = await identity.listApiKeys(sql, { orgId: auth.orgId! });
      return rows.map((r) => keyView(r, r.user_external_id));
    },
  });

  routes.add({
    method: 'delete',
    path: '/organization-pats/{id}',
    tag: 'Identity',
    summary: 'Revoke an organization API key',
    auth: {},
    params: IdParams,
    responses: { 204: { description: 'Revoked' }, ...authErrors, ...notFoundError },
    handler: async ({ params, auth }) => {
      assertCanManageOrgKeys(auth, 'manage');
      if (!(await identity.revokeApiKey(sql, params.id, { orgId: auth.orgId! }))) throw notFound('API key not found');
      verifier.forget(params.id);
      return reply(204);
    },
  });

  routes.add({
    method: 'post',
    path: '/user-pats',
    tag: 'Identity',
    summary: 'Create a personal access token (pat_), shown once',
    auth: { session: true, org: 'optional' },
    body: futureExpiry,
    responses: { 200: { description: 'Created; token is returned only here', schema: CreatedUserToken }, ...authErrors, ...validationError },
    handler: async ({ body, auth }) => {
      const scopes = grantedScopes(body, auth);
      const issued = await issueToken('user');
      const row = await identity.insertApiKey(sql, {
        kind: 'user',
        key_id: issued.keyId,
        secret_hash: issued.secretHash,
        org_id: null,
        user_id: auth.userId,
        name: body.name,
        scopes,
        expires_at: expiry(body),
      });
      return reply(200, { ...keyView(row, auth.userExternalId), token: issued.token });
    },
  });

  routes.add({
    method: 'get',
    path: '/user-pats',
    tag: 'Identity',
    summary: "List the caller's personal access tokens",
    auth: { org: 'optional' },
    responses: { 200: { description: 'Tokens, newest first', schema: z.array(KeyView) }, ...authErrors },
    handler: async ({ auth }) => {
      assertUser(auth);
      const rows = await identity.listApiKeys(sql, { userId: auth.userId });
      return rows.map((r) => keyView(r, r.user_external_id));
    },
  });

  routes.add({
    method: 'delete',
    path: '/user-pats/{id}',
    tag: 'Identity',
    summary: 'Revoke a personal access token',
    auth: { org: 'optional' },
    params: IdParams,
    responses: { 204: { description: 'Revoked' }, ...authErrors, ...notFoundError },
    handler: async ({ params, auth }) => {
      assertUser(auth);
      if (!(await identity.revokeApiKey(sql, params.id, { userId: auth.userId }))) throw notFound('Token not found');
      verifier.forget(params.id);
      return reply(204);
    },
  });

  routes.add({
    method: 'post',
    path: '/pat/exchange',
    tag: 'Identity',
    summary: 'Exchange an ak_ key or pat_ token for a short-lived access token',
    auth: 'public',
    body: ExchangeBody,
    responses: { 200: { description: 'Access token', schema: ExchangeResult }, 401: { description: 'Invalid, expired or revoked', schema: ErrorBody }, ...validationError },
    handler: async ({ body }) => verifier.exchange(body.token),
  });

  routes.add({
    method: 'get',
    path: '/me',
    tag: 'Identity',
    summary: 'The caller: user, active organization, token kind and scopes',
    auth: { org: 'optional' },
    responses: { 200: { description: 'The caller', schema: Me }, ...authErrors },
    handler: async ({ auth }) => ({
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
