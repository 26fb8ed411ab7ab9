import { Runtime } from '@temporalio/worker';
import { createSql, databaseTimeouts } from '../db/client';
import { closeReaderPools } from '../db/analytics-assistant';
import { loadConfigOrExit, requireDatabaseUrl } from '../platform/core/config';
import { createLogger } from '../platform/core/logger';
import { loadMasterKey } from '../platform/core/secrets';
import { createConfiguredStorage } from '../platform/adapters/storage';
import { createTemporalClient } from '../platform/core/temporal';
import { startPendingStartSweep } from '../services/campaigns/workflow-start';
import { startOutboxRelay } from '../services/notifications/relay';
import { startWebhookRelay } from '../services/webhooks/relay';
import { activityLogFields } from './activity-log-context';
import { createWorker } from './create-worker';
import { startHeartbeat } from './heartbeat';
import { temporalRuntimeOptions } from './temporal-logger';

// The worker process. The Temporal runtime turns SIGINT/SIGTERM into a graceful shutdown: polling
// stops, running activities get to finish, then run() resolves and the pools close. One log format:
// the runtime's records and the activities' lines go through the app's JSON logger, the latter with
// the running activity's workflow id, run id, activity type and organization.
const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, undefined, { mixin: activityLogFields });
Runtime.install(temporalRuntimeOptions(logger));
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
// Wakes each webhook endpoint's delivery actor when deliveries are committed for it.
const webhookRelay = await startWebhookRelay({ sql, temporal, config, logger });
// Starts the workflows of campaigns whose start after their create was lost.
const campaignStarts = startPendingStartSweep({ sql, temporal, config, logger });
logger.info({ task_queue: config.TEMPORAL_TASK_QUEUE, address: config.TEMPORAL_ADDRESS }, 'worker polling');
// Liveness for docker-compose.yml and the chart: DATA_DIR/worker-heartbeat.json, fresh while polling.
const heartbeat = startHeartbeat(worker, config.dataDir);
await worker.run();
heartbeat.stop();
await notificationRelay.stop();
await webhookRelay.stop();
await campaignStarts.stop();
await connection.close();
await temporal.connection.close().catch(() => {});
await sql.end({ timeout: 5 });
// The Analytics Assistant's reader pool holds connections of its own: an open one keeps the process alive.
await closeReaderPools();
logger.info('worker stopped');
