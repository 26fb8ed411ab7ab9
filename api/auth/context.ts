import type Koa from 'koa';
import type { ScopeGroup } from './scopes';

export type TokenKind = 'session' | 'organization_key' | 'user_token';

/** Who is calling, resolved to the service's own ids; every route after auth reads only this. */
export interface RequestAuth {
  kind: TokenKind;
  userId: string;
  userExternalId: string;
  /** The active organization, or null when the request carries none. */
  orgId: string | null;
  orgExternalId: string | null;
  scopes: string[];
  /** The api_keys row behind an ak_/pat_ token. */
  keyId: string | null;
}

/**
 * A route's auth rule: `org` (default 'required') needs an active organization, answering 400
 * `Active organization required` without one, or 403 where the API contract says so; `scope` needs one of a
 * scope group; `session` accepts identity-provider sessions only.
 */
export interface AuthRule {
  org?: 'required' | 'required-403' | 'optional';
  scope?: ScopeGroup;
  session?: boolean;
  /** A user's credential (a session or a pat_ token): an organization API key has no user (403). */
  user?: boolean;
}

export interface Authenticator {
  /** The caller, at once when its token was verified before in this process; a promise when it must be. */
  authenticate(ctx: Koa.Context): RequestAuth | Promise<RequestAuth>;
}

/** `user:<id>` with the identity provider's user id, as created_by/modified_by show it. */
export const actor = (auth: RequestAuth): string => `user:${auth.userExternalId}`;

/** The person behind a request, for "who did this" (e.g. not notifying them of their own change); an `ak_` key is nobody's. */
export const actingUser = (auth: RequestAuth): string | null => (auth.kind === 'organization_key' ? null : auth.userId);

/** The active organization of a route whose rule required one. */
export function orgOf(auth: RequestAuth): string {
  if (!auth.orgId) throw new Error('route declared without an organization requirement');
  return auth.orgId;
}
