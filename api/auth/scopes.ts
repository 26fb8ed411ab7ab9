/**
 * The spec's scope groups, as data. A check passes when the token carries at least one listed scope,
 * after expanding each `<x>:manage` to also grant `<x>:read` (never the reverse).
 */
export const SCOPE_GROUPS = {
  crmRead: [
    'api:read',
    'data:access',
    'contacts:read',
    'deals:read',
    'companies:read',
    'activities:read',
    'leads:read',
    'users:read',
    'organizations:read',
    'workflows:read',
  ],
  crmManage: [
    'api:manage',
    'deals:manage',
    'contacts:manage',
    'companies:manage',
    'activities:manage',
    'leads:manage',
    'users:manage',
    'organizations:manage',
    'workflows:manage',
  ],
  orgAdmin: ['organizations:manage'],
  dataAccess: ['data:access'],
  outreachRead: ['outreach:read', 'outreach:manage', 'outreach:provision'],
  outreachManage: ['outreach:manage', 'outreach:provision'],
  outreachProvision: ['outreach:provision'],
  agentsRead: ['agents:read', 'agents:manage'],
  agentsManage: ['agents:manage'],
  // Organization API keys (create, list, revoke): an admin action, not a CRM write.
  keyAdmin: ['api:manage', 'organizations:manage'],
  // The service's operators (reading feedback); no organization role carries it.
  operator: ['service:operate'],
} as const satisfies Record<string, readonly string[]>;

export type ScopeGroup = keyof typeof SCOPE_GROUPS;

/** Every scope the service knows; the development identity provider grants these by default. */
export const ALL_SCOPES: string[] = [...new Set(Object.values(SCOPE_GROUPS).flat())].sort();

/** The token's scopes plus the read scope each manage scope implies. */
export function effectiveScopes(scopes: readonly string[]): Set<string> {
  const out = new Set(scopes);
  for (const scope of scopes) {
    if (scope.endsWith(':manage')) out.add(`${scope.slice(0, -':manage'.length)}:read`);
  }
  return out;
}

export function hasScopeGroup(scopes: readonly string[], group: ScopeGroup): boolean {
  const effective = effectiveScopes(scopes);
  return SCOPE_GROUPS[group].some((scope) => effective.has(scope));
}

/** True when every requested scope is covered by what the caller holds (manage covers read). */
export function scopesWithin(requested: readonly string[], held: readonly string[]): boolean {
  const effective = effectiveScopes(held);
  return requested.every((scope) => effective.has(scope));
}
