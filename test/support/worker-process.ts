import { NativeConnection } from '@temporalio/worker';
import { createSql } from '../../db/client';
import { loadConfig, requireDatabaseUrl } from '../../platform/core/config';
import { createLogger } from '../../platform/core/logger';
import { loadMasterKey } from '../../platform/core/secrets';
import { createConfiguredStorage } from '../../platform/adapters/storage';
import { createTemporalClient } from '../../platform/core/temporal';
import { createWorker } from '../../worker/create-worker';

// A worker in a process of its own, for the durability tests to kill with SIGKILL: configured by the
// environment like worker/main.ts, but with the prebuilt workflow bundle (WORKFLOW_BUNDLE_PATH) so it
// starts in a second or two. It prints `ready` once polling.
const config = loadConfig();
const sql = createSql(requireDatabaseUrl(config), 5);
const storage = createConfiguredStorage(config, loadMasterKey(config.ENCRYPTION_KEY, config.dataDir));
const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS! });
const { worker } = await createWorker(
  {
    config,
    sql,
    storage,
    logger: createLogger(config.LOG_LEVEL),
    temporal: createTemporalClient(config.TEMPORAL_ADDRESS!, config.TEMPORAL_NAMESPACE),
  },
  { connection, workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH },
);
const running = worker.run();
process.stdout.write('ready\n');
await running;
