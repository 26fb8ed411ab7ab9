import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { externalId } from '../support/identity';

// Production wiring: sessions come from an outside provider's JWKS, and the development provider is off.
const ISSUER = 'https://idp.test';
const AUDIENCE = 'voice-crm-test';

let ctx: TestContext;
let jwksServer: http.Server;
let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  jwksServer = http.createServer((_req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  const { port } = jwksServer.address() as AddressInfo;
  ctx = await createTestContext({
    env: { IDP_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`, IDP_ISSUER: ISSUER, IDP_AUDIENCE: AUDIENCE },
  });
});
afterAll(async () => {
  await ctx?.close();
  jwksServer?.close();
});

const sign = (claims: Record<string, unknown>, { issuer = ISSUER, audience = AUDIENCE } = {}) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setSubject(externalId('user'))
    .setIssuer(issuer)
    .setAudience(audience)
    .setExpirationTime('10m')
    .sign(privateKey);

describe('an outside identity provider', () => {
  it('accepts its sessions, with scopes from permissions or scope', async () => {
    const org = externalId('org');
    const viaPermissions = await ctx.request('GET', '/me', { token: await sign({ org_id: org, permissions: ['api:read'] }) });
    expect(viaPermissions.status).toBe(200);
    expect(viaPermissions.body).toMatchObject({ token_kind: 'session', scopes: ['api:read'], organization: { external_id: org } });
    const viaScope = await ctx.request('GET', '/me', { token: await sign({ org_id: org, scope: 'api:read api:manage' }) });
    expect(viaScope.body.scopes).toEqual(['api:read', 'api:manage']);
  });

  it('refuses a wrong issuer or audience', async () => {
    expect((await ctx.request('GET', '/me', { token: await sign({}, { issuer: 'https://evil.test' }) })).status).toBe(401);
    expect((await ctx.request('GET', '/me', { token: await sign({}, { audience: 'other' }) })).status).toBe(401);
  });

  it('turns off the development provider and its JWKS route', async () => {
    expect(ctx.deps.devIdp).toBeNull();
    expect((await ctx.request('GET', '/.well-known/jwks.json')).status).toBe(404);
  });
});
