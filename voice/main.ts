import { randomUUID } from 'node:crypto';
import { createSql, databaseTimeouts } from '../db/client';
import { createChatModel } from '../platform/adapters/llm/chat-model-factory';
import { createConfiguredStorage } from '../platform/adapters/storage';
import { loadConfigOrExit, requireDatabaseUrl } from '../platform/core/config';
import { createLogger } from '../platform/core/logger';
import { loadMasterKey } from '../platform/core/secrets';
import { createTemporalClient } from '../platform/core/temporal';
import { ensureRecordingRetentionSchedule } from '../services/conversations/recordings';
import { startReplayWorker } from './replay/worker';
import { createEngine } from './server';
import { localSpeechStack } from './speech/local';
import { warmUp } from './warm-up';

// The conversation engine process: Twilio Media Streams and widget sockets in, agents speaking out.
// SIGINT/SIGTERM drain: no new conversation is taken (health answers 503 at once), live ones get
// VOICE_DRAIN_SECONDS to end, then move to another engine (Twilio streams the call again, the widget's page
// resumes), then the process exits.
const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL).child({ process: 'voice' });
if (!config.SPEECH_BASE_URL) {
  logger.error('SPEECH_BASE_URL is not set: the engine has no speech models (npm start runs the local speech server)');
  process.exit(1);
}
const sql = createSql(requireDatabaseUrl(config), config.DATABASE_POOL_MAX, databaseTimeouts(config));
const storage = createConfiguredStorage(config, loadMasterKey(config.ENCRYPTION_KEY, config.dataDir));
await storage.ensureReady();
const temporal = createTemporalClient(
  config.TEMPORAL_ADDRESS ?? 'localhost:7233',
  config.TEMPORAL_NAMESPACE,
  {},
  config.TEMPORAL_REQUEST_TIMEOUT_MS,
);
const speech = await localSpeechStack(config.SPEECH_BASE_URL);
const model = createChatModel(config, logger);
logger.info({ model: model.name, ms: await warmUp(model) }, 'model ready');
const engine = createEngine({ config, sql, temporal, storage, logger, speech, model, engineId: `voice-${randomUUID().slice(0, 8)}` });
await ensureRecordingRetentionSchedule({ temporal, config, logger }).catch((error: Error) =>
  logger.warn({ err: error }, 'the recording retention schedule could not be made; the next start tries again'),
);
// Replays of recorded conversations run here too, where the speech models and the model are.
const replays = await startReplayWorker({ config, sql, temporal, storage, logger, speech, model, engineId: 'replay' });
engine.server.listen(config.VOICE_PORT, config.HOST, () =>
  logger.info(
    { port: config.VOICE_PORT, recognizer: speech.recognizer.name, voice: speech.voice.name, model: model.name },
    'voice engine listening',
  ),
);

async function shutdown(signal: string) {
  if (engine.draining) return;
  logger.info({ signal }, 'voice engine stopping');
  await engine.drain(config.VOICE_DRAIN_SECONDS * 1000);
  await replays.stop().catch((error: Error) => logger.warn({ err: error }, 'the replay worker did not stop cleanly'));
  await sql.end({ timeout: 5 });
  await temporal.connection.close().catch(() => {});
  process.exit(0);
}
// One conversation's failure is never the process's: every other live call would go with it.
process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection in a conversation'));
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));
