import { migrate } from '../db/migrate';
import { loadConfigOrExit, publicBaseUrl, requireDatabaseUrl } from '../platform/core/config';
import { createLogger } from '../platform/core/logger';
import { createApp } from '../api/app';
import { buildDeps } from './build-deps';
import { listen } from './listen';

// The API process: validates its config, applies migrations, ensures the object store, serves.
const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL);
await migrate(requireDatabaseUrl(config), (line) => logger.debug(line));
const deps = await buildDeps(config, { logger });
await deps.storage.ensureReady();
const { app } = createApp(deps);
const server = await listen(app, config.PORT, config.HOST);
logger.info({ url: publicBaseUrl(config), docs: `${publicBaseUrl(config)}/docs` }, 'api listening');

async function shutdown(signal: string) {
  logger.info({ signal }, 'api stopping');
  server.close();
  server.closeAllConnections();
  await deps.sql.end({ timeout: 5 });
  await deps.temporal.connection.close().catch(() => {});
  process.exit(0);
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));
