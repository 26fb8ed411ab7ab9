import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../platform/config';

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
    [{ IDP_JWKS_URL: 'https://idp.example/jwks' }, /IDP_JWKS_URL, IDP_ISSUER and IDP_AUDIENCE must be set together/],
    [{ NODE_ENV: 'production' }, /IDP_JWKS_URL is required when NODE_ENV=production/],
    [
      { NODE_ENV: 'production', IDP_JWKS_URL: 'https://idp.example/jwks', IDP_ISSUER: 'i', IDP_AUDIENCE: 'a', WEB_FETCH_ALLOW_PRIVATE: 'true' },
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
});
