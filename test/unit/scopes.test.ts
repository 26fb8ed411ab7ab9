import { describe, expect, it } from 'vitest';
import { SCOPE_GROUPS, effectiveScopes, hasScopeGroup, scopesWithin } from '../../api/auth/scopes';

describe('scope groups, as the spec tables them', () => {
  it.each([
    [
      'crmRead',
      [
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
    ],
    [
      'crmManage',
      [
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
    ],
    ['orgAdmin', ['organizations:manage']],
    ['dataAccess', ['data:access']],
    ['outreachRead', ['outreach:read', 'outreach:manage', 'outreach:provision']],
    ['outreachManage', ['outreach:manage', 'outreach:provision']],
    ['outreachProvision', ['outreach:provision']],
    ['agentsRead', ['agents:read', 'agents:manage']],
    ['agentsManage', ['agents:manage']],
    // Not a table of the spec: who administers organization API keys.
    ['keyAdmin', ['api:manage', 'organizations:manage']],
  ] as const)('%s is passed by exactly its listed scopes', (group, scopes) => {
    expect([...SCOPE_GROUPS[group]].sort()).toEqual([...scopes].sort());
    for (const scope of scopes) expect(hasScopeGroup([scope], group), scope).toBe(true);
  });

  it('lets every CRM manage scope pass CRM read, through its matching read scope', () => {
    for (const scope of SCOPE_GROUPS.crmManage) expect(hasScopeGroup([scope], 'crmRead'), scope).toBe(true);
  });

  it('never lets a read scope pass a manage check', () => {
    for (const scope of SCOPE_GROUPS.crmRead) expect(hasScopeGroup([scope], 'crmManage'), scope).toBe(false);
    expect(hasScopeGroup(['agents:read'], 'agentsManage')).toBe(false);
    expect(hasScopeGroup(['outreach:read'], 'outreachManage')).toBe(false);
  });

  it('grants no CRM access to agents or outreach scopes', () => {
    expect(hasScopeGroup(['agents:manage', 'outreach:provision'], 'crmRead')).toBe(false);
    expect(hasScopeGroup(['agents:manage', 'outreach:provision'], 'crmManage')).toBe(false);
  });

  it('expands manage to read only', () => {
    expect([...effectiveScopes(['deals:manage'])].sort()).toEqual(['deals:manage', 'deals:read']);
    expect([...effectiveScopes(['deals:read'])]).toEqual(['deals:read']);
  });

  it('checks requested scopes against held ones, manage covering read', () => {
    expect(scopesWithin(['api:read'], ['api:manage'])).toBe(true);
    expect(scopesWithin(['api:manage'], ['api:read'])).toBe(false);
    expect(scopesWithin([], [])).toBe(true);
  });
});
