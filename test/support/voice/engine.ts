import type { AddressInfo } from 'node:net';
import { createChatModel } from '../../../platform/adapters/llm/chat-model-factory';
import { mintVoiceSessionToken, type VoiceSessionClaims } from '../../../services/conversations/session-tokens';
import { createEngine, type Engine } from '../../../voice/server';
import { localSpeechStack } from '../../../voice/speech/local';
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

export async function startTestEngine(ctx: TestContext, speechBaseUrl: string): Promise<TestEngine> {
  const speech = await localSpeechStack(speechBaseUrl);
  const engine = createEngine({
    ...ctx.deps,
    speech,
    model: createChatModel(ctx.config, ctx.deps.logger),
    engineId: 'voice-test',
  });
  await new Promise<void>((resolve) => engine.server.listen(0, '127.0.0.1', resolve));
  const { port } = engine.server.address() as AddressInfo;
  return {
    engine,
    url: `ws://127.0.0.1:${port}`,
    token: async (claims) => (await mintVoiceSessionToken(ctx.config, claims, 300)).token,
    async close() {
      for (const c of engine.live) await c.end({ reason: 'engine_stopped', status: 'failed' }, false);
      engine.server.closeAllConnections();
      await new Promise((resolve) => engine.server.close(resolve));
    },
  };
}
