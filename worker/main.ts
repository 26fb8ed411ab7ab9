import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createSql, databaseTimeouts } from '../db/client';
import { loadConfigOrExit, requireDatabaseUrl } from '../platform/config';
import { createLogger } from '../platform/logger';
import { loadMasterKey } from '../platform/secrets';
import { createConfiguredStorage } from '../platform/storage';
import { createTemporalClient } from '../platform/temporal';
import { startOutboxRelay } from '../services/notifications/relay';
import { createWorker } from './create-worker';

// The worker process. The Temporal runtime turns SIGINT/SIGTERM into a graceful shutdown: polling
// stops, running activities get to finish, then run() resolves and the pools close.
const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL);
Runtime.install({ shutdownSignals: ['SIGINT', 'SIGTERM'], logger: new DefaultLogger(config.LOG_LEVEL === 'debug' ? 'DEBUG' : 'WARN') });
const sql = createSql(requireDatabaseUrl(config), config.DATABASE_POOL_MAX, databaseTimeouts(config));
const masterKey = loadMasterKey(config.ENCRYPTION_KEY, config.dataDir);
const storage = createConfiguredStorage(config, masterKey);
await storage.ensureReady();
const temporal = createTemporalClient(
  config.TEMPORAL_ADDRESS ?? 'localhost:7233',
  config.TEMPORAL_NAMESPACE,
  {},
  config.TEMPORAL_REQUEST_TIMEOUT_MS,
);
const { worker, connection } = await createWorker({ config, sql, storage, logger, temporal });
// Hands committed notification events (the outbox) to each organization's actor.
const notificationRelay = await startOutboxRelay({ sql, temporal, config, logger });
logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, address: config.TEMPORAL_ADDRESS }, 'worker polling');
await worker.run();
await notificationRelay.stop();
await connection.close();
await temporal.connection.close().catch(() => {});
await sql.end({ timeout: 5 });
logger.info('worker stopped');
