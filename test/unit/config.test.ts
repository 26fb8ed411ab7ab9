import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../platform/core/config';

describe('configuration', () => {
  it('applies the embedded defaults', () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(8000);
    expect(config.DATA_DIR).toBe('.data');
    expect(config.dataDir).toMatch(/\.data$/);
    expect(config.TEMPORAL_NAMESPACE).toBe('default');
    expect(config.S3_ENDPOINT).toBeUndefined();
  });

  it.each([
    [{ PORT: 'eighty' }, /^Invalid configuration: PORT must be an integer between 1 and 65535$/],
    [{ PORT: '70000' }, /^Invalid configuration: PORT must be an integer between 1 and 65535$/],
    [{ DATABASE_POOL_MAX: '2.5' }, /^Invalid configuration: DATABASE_POOL_MAX must be an integer between 1 and 200$/],
    [{ DATABASE_URL: 'mysql://x' }, /^Invalid configuration: DATABASE_URL must be a postgres:\/\/ URL$/],
    [{ TEMPORAL_ADDRESS: 'no-port' }, /^Invalid configuration: TEMPORAL_ADDRESS must be host:port$/],
    [{ ENCRYPTION_KEY: 'short' }, /^Invalid configuration: ENCRYPTION_KEY must be 64 hex characters/],
    [{ LOG_LEVEL: 'loud' }, /^Invalid configuration: LOG_LEVEL /],
    [{ S3_ENDPOINT: 'http://minio:9000' }, /S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required/],
    [
      { TRUSTED_PROXIES: '10.0.0.1, proxy.internal' },
      /^Invalid configuration: TRUSTED_PROXIES must be comma-separated IP addresses or CIDR ranges$/,
    ],
    [{ TRUSTED_PROXIES: '10.0.0.0/33' }, /^Invalid configuration: TRUSTED_PROXIES must be comma-separated IP addresses or CIDR ranges$/],
    [
      { AUTH_UNPROVEN_FAILURES_PER_KEY: '0' },
      /^Invalid configuration: AUTH_UNPROVEN_FAILURES_PER_KEY must be an integer between 1 and 1000000$/,
    ],
    [
      { AUTH_KEY_PROOF_TTL_SECONDS: '10' },
      /^Invalid configuration: AUTH_KEY_PROOF_TTL_SECONDS must be an integer between 60 and 31536000$/,
    ],
    [{ IDP_JWKS_URL: 'https://idp.example/jwks' }, /IDP_JWKS_URL, IDP_ISSUER and IDP_AUDIENCE must be set together/],
    [{ NODE_ENV: 'production' }, /IDP_JWKS_URL is required when NODE_ENV=production/],
    [
      {
        NODE_ENV: 'production',
        IDP_JWKS_URL: 'https://idp.example/jwks',
        IDP_ISSUER: 'i',
        IDP_AUDIENCE: 'a',
        WEB_FETCH_ALLOW_PRIVATE: 'true',
      },
      /WEB_FETCH_ALLOW_PRIVATE must not be set when NODE_ENV=production/,
    ],
  ])('refuses %o with one line naming the variable', (env, message) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  it('treats blank values as unset', () => {
    expect(loadConfig({ PORT: '' }).PORT).toBe(8000);
  });

  it('trusts no proxy by default, and reads TRUSTED_PROXIES as addresses and CIDR ranges', () => {
    expect(loadConfig({}).TRUSTED_PROXIES).toEqual([]);
    expect(loadConfig({ TRUSTED_PROXIES: '' }).TRUSTED_PROXIES).toEqual([]);
    expect(loadConfig({ TRUSTED_PROXIES: ' 10.0.0.0/8, 192.0.2.7 ,fd00::/8,' }).TRUSTED_PROXIES).toEqual([
      '10.0.0.0/8',
      '192.0.2.7',
      'fd00::/8',
    ]);
  });

  it('limits a key id for addresses that have not proven it, and keeps proofs a week, by default', () => {
    const config = loadConfig({});
    expect(config.AUTH_UNPROVEN_FAILURES_PER_KEY).toBe(50);
    expect(config.AUTH_KEY_PROOF_TTL_SECONDS).toBe(604_800);
  });
});
