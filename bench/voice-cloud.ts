import { startFakeDeepgram } from '../test/support/voice/fake-deepgram';
import { startFakeElevenLabs } from '../test/support/voice/fake-elevenlabs';
import { startFakeOpenAi } from '../test/support/voice/fake-openai';
import { AGENT_CONFIG, startBenchSpeechServer, startVoiceBenchEngine } from './voice-engine-env';

// The engine on the cloud path, for `voice-scale --cloud`: the agent hears through Deepgram, speaks through
// ElevenLabs and answers with an OpenAI-compatible model, each a local fake speaking the provider's
// protocol (test/support/voice/) with the provider's latency injected. The fakes' own work is cheap (the
// voice's audio is synthesized once per sentence by the local speech server and cached), so the CPU the
// levels measure is the engine's, the API's and the simulated callers'.
//
// Latencies injected (one-way, on loopback):
//   Deepgram   the engine asks `endpointing=300`: the fake calls the speech final after 300 ms of silence, as
//              Deepgram's endpointing does (developers.deepgram.com/docs/understand-endpointing-interim-results);
//              every message then 50 ms later: network and processing, an assumption.
//   ElevenLabs first audio 125 ms after the text is flushed: ~75 ms of model time for eleven_flash_v2_5
//              (elevenlabs.io/docs/overview/models, "~75ms", model time only) and 50 ms of network, an assumption.
//   Model      first token 350 ms after the request, then a word every 15 ms (~70 tokens/s): an assumption, in
//              the range public measurements give hosted small models (gpt-4o-mini class, 0.3-0.5 s); OpenAI
//              publishes no figure.
export const CLOUD_LATENCIES = {
  deepgram_endpointing_ms: 300,
  deepgram_message_ms: 50,
  elevenlabs_first_audio_ms: 125,
  model_first_token_ms: 350,
  model_word_ms: 15,
};

const KEYS = { deepgram: 'dg-bench', elevenlabs: 'el-bench', openai: 'sk-bench' };
/** What Deepgram "hears" in every caller turn, and what the model answers: one short sentence, as a receptionist's. */
const HEARD = 'I would like to book a cleaning next week.';
const ANSWER = 'Of course, we have Tuesday at ten or Thursday at two, which one suits you?';

export async function startCloudVoiceEngine() {
  const speech = process.env.SPEECH_BASE_URL ? null : await startBenchSpeechServer();
  const speechBaseUrl = speech?.url ?? process.env.SPEECH_BASE_URL!;
  const [deepgram, elevenlabs, openai] = await Promise.all([startFakeDeepgram(), startFakeElevenLabs(speechBaseUrl), startFakeOpenAi()]);
  deepgram.keys.add(KEYS.deepgram);
  deepgram.fallback = HEARD;
  deepgram.latencyMs = CLOUD_LATENCIES.deepgram_message_ms;
  elevenlabs.keys.add(KEYS.elevenlabs);
  elevenlabs.firstAudioMs = CLOUD_LATENCIES.elevenlabs_first_audio_ms;
  openai.keys.add(KEYS.openai);
  openai.fallback = { text: ANSWER };
  openai.firstTokenMs = CLOUD_LATENCIES.model_first_token_ms;
  openai.tokenMs = CLOUD_LATENCIES.model_word_ms;
  const closeFakes = async () => {
    await Promise.all([deepgram.close(), elevenlabs.close(), openai.close()]);
    await speech?.stop();
  };
  try {
    const engine = await startVoiceBenchEngine({
      speechBaseUrl,
      env: {
        DEEPGRAM_API_BASE_URL: deepgram.url,
        ELEVENLABS_API_BASE_URL: elevenlabs.url,
        OPENAI_API_BASE_URL: openai.baseUrl,
        // The deployment's own model is the same hosted one: nothing local answers.
        LLM_BASE_URL: openai.baseUrl,
        LLM_API_KEY: KEYS.openai,
        LLM_MODEL: 'gpt-4o-mini',
      },
      agentConfig: {
        ...AGENT_CONFIG,
        transcriber: { provider: 'deepgram' },
        voice: { provider: 'elevenlabs', voice_id: 'voice-rachel' },
        llm: { provider: 'openai', model: 'gpt-4o-mini' },
      },
      prepare: async (api) => {
        for (const [provider, apiKey] of Object.entries(KEYS))
          await api('POST', '/integrations/speech-accounts', { provider, api_key: apiKey });
      },
    });
    return {
      ...engine,
      model: 'gpt-4o-mini (fake OpenAI-compatible)',
      /** The providers, their latencies, and how often each answered (the local models did not stand in). */
      describe: () => ({
        providers: { transcriber: 'deepgram (fake)', voice: 'elevenlabs (fake)', latencies_ms: CLOUD_LATENCIES },
        provider_use: {
          deepgram_streams: deepgram.streams.length,
          elevenlabs_generations: elevenlabs.texts.length,
          model_requests: openai.requests.length,
        },
      }),
      async close() {
        await engine.close();
        await closeFakes();
      },
    };
  } catch (error) {
    await closeFakes();
    throw error;
  }
}
