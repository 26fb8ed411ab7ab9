import fs from 'node:fs';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

// The development identity provider: an ES256 key pair under DATA_DIR, its public half served as
// JWKS, and a signer the CLI uses to mint sessions. Refused in production by the config loader.
export const DEV_IDP_ISSUER = 'urn:voice-crm:dev-idp';
export const DEV_IDP_AUDIENCE = 'voice-crm';
const ALG = 'ES256';

export interface DevIdp {
  publicJwk: JWK;
  sign(claims: SessionClaims, ttlSeconds?: number): Promise<string>;
}

export interface SessionClaims {
  sub: string;
  org_id?: string;
  org_ids?: string[];
  permissions?: string[];
  /** The user's address; the service keeps it on the user for notification emails. */
  email?: string;
}

async function readOrCreatePrivateJwk(dataDir: string): Promise<JWK> {
  const file = path.join(dataDir, 'keys', 'dev-idp.jwk.json');
  if (!fs.existsSync(file)) {
    const { privateKey } = await generateKeyPair(ALG, { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: `dev-${Date.now().toString(36)}`, alg: ALG };
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    try {
      fs.writeFileSync(file, JSON.stringify(jwk), { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return JSON.parse(fs.readFileSync(file, 'utf8')) as JWK;
}

export async function loadDevIdp(dataDir: string): Promise<DevIdp> {
  const privateJwk = await readOrCreatePrivateJwk(dataDir);
  const { d: _d, ...publicJwk } = privateJwk;
  const key = await importJWK(privateJwk, ALG);
  return {
    publicJwk: { ...publicJwk, use: 'sig' },
    sign: (claims, ttlSeconds = 12 * 3600) =>
      new SignJWT({ ...claims })
        .setProtectedHeader({ alg: ALG, kid: privateJwk.kid })
        .setIssuer(DEV_IDP_ISSUER)
        .setAudience(DEV_IDP_AUDIENCE)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
        .sign(key),
  };
}
