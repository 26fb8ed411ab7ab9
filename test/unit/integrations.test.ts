import { describe, expect, it } from 'vitest';
import { grantedScopes, isInvalidGrant, originAllowed, renderConnectPage, renderErrorPage, tokenRefusal } from '../../domain/integrations';
import { ConfigError, loadConfig } from '../../platform/core/config';
import { CatalogError, loadCatalog } from '../../platform/core/oauth-catalog';

const provider = {
  key: 'acme',
  name: 'Acme',
  authorization_url: 'https://id.acme.test/authorize',
  token_url: 'https://id.acme.test/token',
  client_id: 'c',
  client_secret: 's',
};

describe('the integrations catalog', () => {
  it('is the simulated provider on the embedded defaults, and empty without it', () => {
    const catalog = loadCatalog({ SIMULATED_OAUTH_ISSUER: 'http://127.0.0.1:8090' });
    expect([...catalog.keys()]).toEqual(['simulated']);
    expect(catalog.get('simulated')).toMatchObject({
      simulated: true,
      token_url: 'http://127.0.0.1:8090/token',
      token_auth_method: 'none',
    });
    expect(loadCatalog({}).size).toBe(0);
  });

  it('takes INTEGRATION_PROVIDERS instead, with defaults, the issuer from the authorization URL', () => {
    const catalog = loadCatalog({ INTEGRATION_PROVIDERS: JSON.stringify([provider]), SIMULATED_OAUTH_ISSUER: 'http://127.0.0.1:8090' });
    expect([...catalog.keys()]).toEqual(['acme']);
    expect(catalog.get('acme')).toMatchObject({
      issuer: 'https://id.acme.test',
      simulated: false,
      client_source: 'config',
      token_auth_method: 'client_secret_basic',
      scopes: [],
    });
  });

  it('refuses a malformed catalog with one line naming the fault, at start', () => {
    for (const [value, message] of [
      ['not json', 'must be a JSON array'],
      [JSON.stringify([{ ...provider, token_url: 'ftp://x' }]), 'token_url'],
      [JSON.stringify([provider, provider]), 'listed twice'],
      [JSON.stringify([{ ...provider, client_id: undefined }]), 'client_id is required'],
      [JSON.stringify([{ ...provider, client_secret: undefined }]), 'client_secret is required'],
    ] as const) {
      expect(() => loadCatalog({ INTEGRATION_PROVIDERS: value })).toThrow(CatalogError);
      expect(() => loadCatalog({ INTEGRATION_PROVIDERS: value })).toThrow(message);
      expect(() => loadConfig({ INTEGRATION_PROVIDERS: value })).toThrow(ConfigError);
    }
    expect(() =>
      loadCatalog({
        INTEGRATION_PROVIDERS: JSON.stringify([
          { ...provider, client_source: 'organization', client_id: undefined, client_secret: undefined },
        ]),
      }),
    ).not.toThrow();
  });
});

describe('integration rules', () => {
  it('allows a redirect only on a listed origin (scheme, host and port)', () => {
    const allowed = ['https://app.example.com', 'http://localhost:8000'];
    expect(originAllowed('https://app.example.com/done?x=1', allowed)).toBe(true);
    expect(originAllowed('http://localhost:8000/x', allowed)).toBe(true);
    expect(originAllowed('http://app.example.com/done', allowed)).toBe(false);
    expect(originAllowed('https://app.example.com.evil.test/', allowed)).toBe(false);
    expect(originAllowed('https://app.example.com:444/', allowed)).toBe(false);
    expect(originAllowed('not a url', allowed)).toBe(false);
  });

  it('tells used, expired and unknown tokens apart', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    expect(tokenRefusal(undefined, now)).toBe('unknown');
    expect(tokenRefusal({ expires_at: new Date('2030-01-01T00:10:00Z'), used_at: new Date('2029-12-31T23:59:00Z') }, now)).toBe('used');
    expect(tokenRefusal({ expires_at: now, used_at: null }, now)).toBe('expired');
    expect(tokenRefusal({ expires_at: new Date('2030-01-01T00:00:01Z'), used_at: null }, now)).toBeNull();
  });

  it('reads invalid_grant out of a refresh error, and granted scopes out of a token answer', () => {
    expect(isInvalidGrant('Token endpoint answered 400 (invalid_grant: grant request is invalid)')).toBe(true);
    expect(isInvalidGrant('Token endpoint answered 503 (temporarily_unavailable)')).toBe(false);
    expect(grantedScopes('openid  email openid', ['x'])).toEqual(['email', 'openid']);
    expect(grantedScopes(undefined, ['b', 'a'])).toEqual(['a', 'b']);
  });

  it('escapes everything a provider name or description carries into the pages', () => {
    const html = renderConnectPage(
      [
        {
          key: 'k',
          name: '<script>alert(1)</script>',
          description: '"quoted"',
          simulated: true,
          scopes: ['a&b'],
          href: 'https://x/?a=1&b=2',
        },
      ],
      false,
    );
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('&#60;script&#62;');
    expect(html).toContain('a&#38;b');
    expect(renderErrorPage('<b>', 'x')).toContain('&#60;b&#62;');
  });
});
