import type { AddressInfo } from 'node:net';
import { describe, inject } from 'vitest';
import type { ChatModel } from '../../../platform/adapters/llm/chat-model';
import { createChatModel } from '../../../platform/adapters/llm/chat-model-factory';
import { mintVoiceSessionToken, type VoiceSessionClaims } from '../../../services/conversations/session-tokens';
import { createEngine, type Engine } from '../../../voice/server';
import { localSpeechStack } from '../../../voice/speech/local';
import { waitFor } from '../campaigns';
import type { TestContext } from '../context';

// The conversation engine in the test's process, on the test context's database, Temporal and storage,
// with the run's speech server and the context's model (a scripted fake through LLM_BASE_URL).

export interface TestEngine {
  engine: Engine;
  url: string;
  /** A token for a Media Stream or a widget socket of this organization's agent. */
  token(claims: Omit<VoiceSessionClaims, 'direction'> & { direction?: 'inbound' | 'outbound' }): Promise<string>;
  close(): Promise<void>;
}

/**
 * `port`: a port picked before the context was made (its VOICE_PUBLIC_URL names the engine); else any free one.
 * `model`: wraps the context's model (to watch what the engine asks of it).
 */
export async function startTestEngine(
  ctx: TestContext,
  speechBaseUrl: string,
  options: { port?: number; model?: (model: ChatModel) => ChatModel } = {},
): Promise<TestEngine> {
  const speech = await localSpeechStack(speechBaseUrl);
  const model = createChatModel(ctx.config, ctx.deps.logger);
  const engine = createEngine({
    ...ctx.deps,
    speech,
    model: options.model ? options.model(model) : model,
    engineId: `voice-test-${crypto.randomUUID().slice(0, 8)}`,
  });
  await new Promise<void>((resolve) => engine.server.listen(options.port ?? 0, '127.0.0.1', resolve));
  await engine.listening;
  const { port } = engine.server.address() as AddressInfo;
  return {
    engine,
    url: `ws://127.0.0.1:${port}`,
    token: async (claims) => (await mintVoiceSessionToken(ctx.config, claims, 300)).token,
    async close() {
      await engine.stop();
      for (const c of engine.live) await c.end({ reason: 'engine_stopped', status: 'failed' }, false);
      engine.server.closeAllConnections();
      await new Promise((resolve) => engine.server.close(resolve));
    },
  };
}

/** The run's speech server; under CI a run without one fails instead of skipping the voice tests. */
export function speechServer(): { url: string; describe: typeof describe | typeof describe.skip } {
  const url = inject('speechUrl');
  if (!url && process.env.CI === 'true') throw new Error('the speech server is required under CI');
  return { url, describe: url ? describe : describe.skip };
}

/** The agent's newest conversation once its workflow has written the summary (the call has ended). */
export function finishedConversation(ctx: TestContext, token: string, agentId: string) {
  return waitFor(
    async () => {
      const list = await ctx.request('GET', `/core/agents/${agentId}/conversations`, { token });
      const id = list.body.data?.[0]?.id;
      if (!id) return undefined;
      const res = await ctx.request('GET', `/core/agents/${agentId}/conversations/${id}`, { token });
      return res.body.summary ? res.body : undefined;
    },
    30_000,
    'the conversation summarized',
  );
}
