import { createSql } from '../db/client';
import { loadConfigOrExit, requireDatabaseUrl } from '../platform/core/config';
import { createLogger } from '../platform/core/logger';
import { credentialKeyring, resealCredentialValues } from '../services/credentials/values';

// `npm run rotate-key`: after setting a new ENCRYPTION_KEY and listing the old one in
// ENCRYPTION_KEYS_PREVIOUS, re-seals every credential value with the new key. Safe to run while the
// service runs, and to run again; once it reports 0 the old key may be dropped.
const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL);
const sql = createSql(requireDatabaseUrl(config), 2);
try {
  const count = await resealCredentialValues({ sql, config });
  logger.info({ resealed: count, key_id: credentialKeyring(config).current.id }, 'credential values re-sealed with the current key');
} catch (error) {
  logger.error({ err: error }, 'key rotation failed');
  process.exitCode = 1;
} finally {
  await sql.end({ timeout: 5 });
}
