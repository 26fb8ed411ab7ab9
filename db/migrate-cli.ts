import { loadConfigOrExit } from '../platform/core/config';
import { createLogger } from '../platform/core/logger';
import { migrate } from './migrate';

const config = loadConfigOrExit();
const log = createLogger(config.LOG_LEVEL);
if (!config.DATABASE_URL) {
  log.error('DATABASE_URL is required to run migrations');
  process.exit(1);
}
const applied = await migrate(config.DATABASE_URL);
log.info({ applied }, 'migrations applied');
