import type { Client } from '@temporalio/client';
import { createSql, databaseTimeouts, type Sql } from '../db/client';
import { requireDatabaseUrl, type Config } from '../platform/core/config';
import { DEV_IDP_AUDIENCE, DEV_IDP_ISSUER, loadDevIdp } from '../platform/core/dev-idp';
import { createLogger, type Logger } from '../platform/core/logger';
import { deriveKey, loadMasterKey } from '../platform/core/secrets';
import { createConfiguredStorage } from '../platform/adapters/storage';
import { connectionOptions, createTemporalClient } from '../platform/core/temporal';
import { TokenVerifier, idpFromJwksUrl, idpFromPublicJwk } from '../api/auth/verifier';
import type { AppDeps } from '../api/deps';

/** Builds the API's dependencies from the config; tests pass their own sql/temporal/logger. */
export async function buildDeps(config: Config, overrides: { sql?: Sql; temporal?: Client; logger?: Logger } = {}): Promise<AppDeps> {
  const logger = overrides.logger ?? createLogger(config.LOG_LEVEL);
  const sql = overrides.sql ?? createSql(requireDatabaseUrl(config), config.DATABASE_POOL_MAX, databaseTimeouts(config));
  const masterKey = loadMasterKey(config.ENCRYPTION_KEY, config.dataDir);
  const devIdp = config.IDP_JWKS_URL ? null : await loadDevIdp(config.dataDir);
  const idp = devIdp
    ? idpFromPublicJwk(devIdp.publicJwk, DEV_IDP_ISSUER, DEV_IDP_AUDIENCE)
    : idpFromJwksUrl(config.IDP_JWKS_URL!, config.IDP_ISSUER!, config.IDP_AUDIENCE!);
  const verifier = new TokenVerifier(
    { sql },
    idp,
    deriveKey(masterKey, 'access-token'),
    config.TOKEN_CACHE_TTL_SECONDS,
    config.ACCESS_TOKEN_TTL_SECONDS,
    {
      failuresPerKey: config.AUTH_FAILURES_PER_KEY,
      failuresPerAddress: config.AUTH_FAILURES_PER_ADDRESS,
      unprovenFailuresPerKey: config.AUTH_UNPROVEN_FAILURES_PER_KEY,
      proofTtlSeconds: config.AUTH_KEY_PROOF_TTL_SECONDS,
      failureWindowSeconds: config.AUTH_FAILURE_WINDOW_SECONDS,
      negativeCacheSeconds: config.AUTH_NEGATIVE_CACHE_SECONDS,
      hashConcurrency: config.AUTH_HASH_CONCURRENCY,
      failureDelayMs: config.AUTH_FAILURE_DELAY_MS,
    },
  );
  const temporal =
    overrides.temporal ??
    createTemporalClient(
      config.TEMPORAL_ADDRESS ?? 'localhost:7233',
      config.TEMPORAL_NAMESPACE,
      connectionOptions(config, ''),
      config.TEMPORAL_REQUEST_TIMEOUT_MS,
    );
  const storage = createConfiguredStorage(config, masterKey);
  return { config, sql, temporal, storage, logger, verifier, devIdp };
}
