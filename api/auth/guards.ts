import { badRequest, forbidden } from '../errors';
import type { AuthRule, RequestAuth } from './context';
import { hasScopeGroup } from './scopes';

export const ACTIVE_ORG_REQUIRED = 'Active organization required';

/** Applies a route's AuthRule to an authenticated caller; throws the contract's status and detail. */
export function enforce(rule: AuthRule | 'public', auth: RequestAuth): void {
  if (rule === 'public') return;
  if (rule.session && auth.kind !== 'session') throw forbidden('This operation requires an identity-provider session');
  if (rule.user && auth.kind === 'organization_key')
    throw forbidden('An organization API key has no user: this operation takes a session or a pat_ user token');
  const org = rule.org ?? 'required';
  if (org !== 'optional' && !auth.orgId) {
    throw org === 'required-403' ? forbidden(ACTIVE_ORG_REQUIRED) : badRequest(ACTIVE_ORG_REQUIRED);
  }
  if (rule.scope && !hasScopeGroup(auth.scopes, rule.scope)) throw forbidden('Insufficient permissions');
}
