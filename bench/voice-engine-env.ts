import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { startSpeechServer, type LocalSpeechServer } from '../dev-servers/speech-server';
import { freePort } from '../dev-servers/ports';
import { createChatModel } from '../platform/adapters/llm/chat-model-factory';
import { createLogger } from '../platform/core/logger';
import { ORGANIZATION_ID } from '../platform/core/temporal';
import { findSpeechServer, findTemporalCli } from '../platform/core/tools';
import { mintVoiceSessionToken } from '../services/conversations/session-tokens';
import { createEngine } from '../voice/server';
import { localSpeechStack } from '../voice/speech/local';
import { warmUp } from '../voice/warm-up';
import { type BenchEnvironment, jsonCaller, startBenchEnvironment } from './environment';
import { startWorker, stopWorker } from './worker-process';

// The engine as `npm start` runs it, for the voice bench: a throwaway Postgres, the Temporal dev server,
// a worker process, the local speech server (or SPEECH_BASE_URL), the configured model (LLM_BASE_URL, else
// the local one), and an organization with a published agent; tokens are minted for it per call.

export const AGENT_CONFIG = {
  instructions:
    'You are the receptionist of the Bright Smile dental clinic, open nine to five on weekdays. You book, move and cancel appointments. Answer in one short sentence.',
  first_message: 'Hello, Bright Smile dental clinic. How can I help you?',
  first_speaker: 'agent',
  limits: { silence_timeout_seconds: 60, max_idle_prompts: 0 },
  recording: { enabled: false },
  // A receptionist's spoken answer is a sentence or two; the small local model rambles and invents words
  // at the default 0.7 and 1,024 tokens, and its minute-long answers would be what the bench measured.
  llm: { temperature: 0.3, max_tokens: 60 },
};

/** The local speech server, started for a bench. */
export async function startBenchSpeechServer(): Promise<LocalSpeechServer> {
  const command = findSpeechServer();
  if (!command) throw new Error('the speech server is not installed: bash scripts/install-tools.sh speech');
  return startSpeechServer({ command, port: await freePort() });
}

/**
 * What an engine needs around it: the Temporal dev server, the local speech server (or SPEECH_BASE_URL), a
 * throwaway Postgres with the API, and a worker process; `extra` is given to the API and the worker. A speech
 * server given by address is left running.
 */
export async function startVoiceBenchStack(extra: Record<string, string> = {}, givenSpeechUrl?: string) {
  const cli = findTemporalCli();
  if (!cli) throw new Error('temporal CLI not found: run `npm run tools` first');
  const temporal = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cli },
      ip: '127.0.0.1',
      searchAttributes: [ORGANIZATION_ID],
      log: { format: 'json', level: 'error' },
    },
  });
  let speech: LocalSpeechServer | undefined;
  let speechBaseUrl = givenSpeechUrl ?? process.env.SPEECH_BASE_URL;
  let env: BenchEnvironment | undefined;
  let worker: ChildProcess | undefined;
  const workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-bench-voice-worker-'));
  const close = async () => {
    await stopWorker(worker);
    await env?.close();
    await speech?.stop();
    await temporal.teardown();
    fs.rmSync(workerDir, { recursive: true, force: true });
  };
  try {
    if (!speechBaseUrl) {
      speech = await startBenchSpeechServer();
      speechBaseUrl = speech.url;
    }
    env = await startBenchEnvironment({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: 'bench-voice', ...extra });
    worker = await startWorker({
      DATABASE_URL: env.databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: 'bench-voice',
      DATA_DIR: workerDir,
      ...extra,
    });
    return { env, speechBaseUrl, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface VoiceBenchEngineOptions {
  /** A speech server already running (else SPEECH_BASE_URL, else one is started). */
  speechBaseUrl?: string;
  /** Settings of the API, the worker and the engine (e.g. providers' addresses). */
  env?: Record<string, string>;
  /** The agent's configuration, instead of the local models' receptionist. */
  agentConfig?: Record<string, unknown>;
  /** Runs as the organization before its agent is made (e.g. connects its provider keys). */
  prepare?: (api: ReturnType<typeof jsonCaller>) => Promise<void>;
}

/** The bench's organization and its published agent (`prepare` runs first, as the organization). */
export async function publishBenchAgent(
  env: BenchEnvironment,
  config: Record<string, unknown>,
  prepare?: VoiceBenchEngineOptions['prepare'],
) {
  const session = await env.deps.devIdp!.sign({
    sub: 'bench',
    org_id: 'bench-voice',
    org_ids: ['bench-voice'],
    permissions: ['api:read', 'api:manage', 'agents:manage', 'organizations:manage'],
  });
  const api = jsonCaller(env.baseUrl, () => session);
  await prepare?.(api);
  const agent = await api('POST', '/core/agents', { name: 'Bench front desk' });
  await api('POST', `/core/agents/${agent.id}/versions`, { config });
  await api('POST', `/core/agents/${agent.id}/versions/1/publish`, {});
  const [org] = await env.deps.sql<{ id: string }[]>`SELECT id FROM organizations WHERE external_id = 'bench-voice'`;
  return { api, agentId: agent.id as string, orgId: org!.id };
}

export async function startVoiceBenchEngine(options: VoiceBenchEngineOptions = {}) {
  const llm: Record<string, string> = process.env.LLM_BASE_URL
    ? { LLM_BASE_URL: process.env.LLM_BASE_URL, LLM_MODEL: process.env.LLM_MODEL ?? 'default' }
    : {};
  const stack = await startVoiceBenchStack({ ...llm, ...options.env }, options.speechBaseUrl);
  const { env, speechBaseUrl } = stack;
  try {
    const { api, agentId, orgId } = await publishBenchAgent(env, options.agentConfig ?? AGENT_CONFIG, options.prepare);
    const key = await api('POST', '/organization-pats', { name: 'bench' });
    const model = createChatModel(env.deps.config, env.deps.logger);
    await warmUp(model);
    // VOICE_BENCH_LOG=info: the engine's own log lines on stderr (the bench's environment is silent).
    const logger = process.env.VOICE_BENCH_LOG ? createLogger(process.env.VOICE_BENCH_LOG as 'info') : env.deps.logger;
    const engine = createEngine({ ...env.deps, logger, speech: await localSpeechStack(speechBaseUrl), model, engineId: 'bench' });
    await new Promise<void>((resolve) => engine.server.listen(0, '127.0.0.1', resolve));
    const { port } = engine.server.address() as AddressInfo;
    return {
      url: `ws://127.0.0.1:${port}`,
      speechBaseUrl,
      api: { baseUrl: env.baseUrl, apiKey: key.pat_key as string },
      model: model.name,
      async session(call: number) {
        const from = `+1555${String(call).padStart(7, '0')}`;
        const { token } = await mintVoiceSessionToken(env.deps.config, { org: orgId, agent: agentId, channel: 'twilio', from }, 3600);
        return { token, from, agentId };
      },
      async close() {
        for (const c of engine.live) await c.end({ reason: 'engine_stopped', status: 'failed' }, false);
        engine.server.closeAllConnections();
        engine.server.close();
        await stack.close();
      },
    };
  } catch (error) {
    await stack.close();
    throw error;
  }
}

export type VoiceBenchEngine = Awaited<ReturnType<typeof startVoiceBenchEngine>>;
