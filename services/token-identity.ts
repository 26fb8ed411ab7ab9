import * as identity from '../db/identity';
import type { ServiceDeps } from './deps';

// Who a bearer token is: the key rows, proofs and memberships the HTTP verifier (api/auth/verifier.ts)
// reads, and the user, organizations and memberships a session creates on first sight.

type Deps = Pick<ServiceDeps, 'sql'>;
export type KeyKind = Parameters<typeof identity.findApiKeyByKeyId>[1];

/** A key by its public id, with its owners and whether `address` proved it. */
export const findKey = (deps: Deps, kind: KeyKind, keyId: string, address: string) =>
  identity.findApiKeyByKeyId(deps.sql, kind, keyId, address);

/** Revocation of the key an exchanged access token came from. */
export const keyStatus = (deps: Deps, keyRowId: string) => identity.findApiKeyStatus(deps.sql, keyRowId);

/** Records a key's use (last_used_at). */
export const keyUsed = (deps: Deps, keyRowId: string) => identity.touchApiKey(deps.sql, keyRowId);

/** That `address` proved the key's secret, for `ttlSeconds`. */
export const recordKeyProof = (deps: Deps, keyRowId: string, address: string, ttlSeconds: number) =>
  identity.recordApiKeyProof(deps.sql, keyRowId, address, ttlSeconds);

/** The addresses with a live proof of a key, at most `limit` of them. */
export const keyProofAddresses = (deps: Deps, kind: KeyKind, keyId: string, limit: number) =>
  identity.listApiKeyProofAddresses(deps.sql, kind, keyId, limit);

/** A user's organizations with the scopes its last session in each carried. */
export const membershipsOf = (deps: Deps, userId: string) => identity.membershipsOf(deps.sql, userId);

/** The user behind a subject, created on first sight. */
export const userOf = (deps: Deps, subject: string) => identity.upsertUser(deps.sql, subject);

export const organizationByExternalId = (deps: Deps, externalId: string) => identity.findOrganizationByExternalId(deps.sql, externalId);

export interface SessionClaims {
  subject: string;
  email: unknown;
  /** Claimed organizations (external ids), the active one included. */
  orgExternalIds: string[];
  activeOrg: string | null;
  scopes: string[];
  /** The session lists every membership (`org_ids`): the ones it no longer lists are removed. */
  complete: boolean;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/**
 * A session's first sight of its user and organizations: both are created, the provider's email claim
 * becomes where notification emails go, and memberships follow the claims.
 */
export async function signInSession(deps: Deps, claims: SessionClaims): Promise<{ userId: string; orgs: Map<string, string> }> {
  const userId = await identity.upsertUser(deps.sql, claims.subject);
  if (typeof claims.email === 'string' && EMAIL.test(claims.email) && claims.email.length <= 320) {
    await identity.setUserEmail(deps.sql, userId, claims.email);
  }
  const orgs = new Map<string, string>();
  for (const ext of claims.orgExternalIds) orgs.set(ext, await identity.upsertOrganization(deps.sql, ext));
  await identity.syncSessionMemberships(deps.sql, userId, {
    orgIds: [...orgs.values()],
    activeOrgId: claims.activeOrg ? orgs.get(claims.activeOrg)! : null,
    scopes: claims.scopes,
    complete: claims.complete,
  });
  return { userId, orgs };
}
