import type { AddressInfo } from 'node:net';
import { createSql } from '../../../db/client';
import { loadConfig, requireDatabaseUrl } from '../../../platform/core/config';
import { createLogger } from '../../../platform/core/logger';
import { loadMasterKey } from '../../../platform/core/secrets';
import { createConfiguredStorage } from '../../../platform/adapters/storage';
import { createChatModel } from '../../../platform/adapters/llm/chat-model-factory';
import { createTemporalClient } from '../../../platform/core/temporal';
import { createEngine } from '../../../voice/server';
import { localSpeechStack } from '../../../voice/speech/local';

// The conversation engine in a process of its own, for the failover tests to kill with SIGKILL or stop
// with SIGTERM (the engine's drain, as voice/main.ts runs it): configured by the environment like
// voice/main.ts (no warm-up, no schedules), on a free port. It prints `ready <port>` once it listens and
// hears the API's events.
const config = loadConfig();
const sql = createSql(requireDatabaseUrl(config), 5);
const logger = createLogger(config.LOG_LEVEL);
const engine = createEngine({
  config,
  sql,
  temporal: createTemporalClient(config.TEMPORAL_ADDRESS!, config.TEMPORAL_NAMESPACE),
  storage: createConfiguredStorage(config, loadMasterKey(config.ENCRYPTION_KEY, config.dataDir)),
  logger,
  speech: await localSpeechStack(config.SPEECH_BASE_URL!),
  model: createChatModel(config, logger),
  engineId: `voice-child-${process.pid}`,
});
await engine.listening;
engine.server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${(engine.server.address() as AddressInfo).port}\n`));
process.once(
  'SIGTERM',
  () =>
    void engine.drain(config.VOICE_DRAIN_SECONDS * 1000).then(
      () => process.exit(0),
      () => process.exit(1),
    ),
);
