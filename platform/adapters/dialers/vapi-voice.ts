import type { AgentConfig } from '../../../domain/agent-config';

// The version's voice, model and transcriber as Vapi's CreateAssistantDTO names them. Our provider
// names map to Vapi's (`elevenlabs` is `11labs`, AssemblyAI is `assembly-ai`); a `default` voice id is
// the provider's documented default voice, never the word itself; numbers Vapi bounds more narrowly
// than we do (ElevenLabs' speed, the model's maxTokens) are brought inside its range.

type Voice = AgentConfig['voice'];
type Llm = AgentConfig['llm'];
type Transcriber = AgentConfig['transcriber'];

export const VAPI_VOICE_PROVIDERS = {
  elevenlabs: '11labs',
  cartesia: 'cartesia',
  openai: 'openai',
  azure: 'azure',
  deepgram: 'deepgram',
  playht: 'playht',
} as const satisfies Record<Voice['provider'], string>;

export type VapiVoiceProvider = (typeof VAPI_VOICE_PROVIDERS)[Voice['provider']];

/**
 * Each provider's default voice as Vapi's provider pages name it (ElevenLabs `sarah`, OpenAI `alloy`,
 * Azure `andrew`, Deepgram `asteria`); Cartesia and PlayHT name none there, so the voice Vapi's own
 * examples use (a Cartesia voice id, PlayHT's preset `jennifer`).
 */
export const VAPI_DEFAULT_VOICES: Record<VapiVoiceProvider, string> = {
  '11labs': 'sarah',
  cartesia: '248be419-c632-4f23-adf1-5324ed7dbf1d',
  openai: 'alloy',
  azure: 'andrew',
  deepgram: 'asteria',
  playht: 'jennifer',
};

/** The speed range each provider's voice takes at Vapi (absent: the voice has no speed). */
const SPEED: Partial<Record<VapiVoiceProvider, [number, number]>> = {
  '11labs': [0.7, 1.2],
  openai: [0.25, 4],
  azure: [0.5, 2],
  playht: [0.1, 5],
};

const clamp = (value: number, [min, max]: [number, number]) => Math.min(max, Math.max(min, value));

export function vapiVoice(voice: Partial<Voice> | undefined): Record<string, unknown> {
  const provider = VAPI_VOICE_PROVIDERS[voice?.provider ?? 'elevenlabs'] ?? '11labs';
  const id = voice?.voice_id && voice.voice_id !== 'default' ? voice.voice_id : VAPI_DEFAULT_VOICES[provider];
  const out: Record<string, unknown> = { provider, voiceId: id };
  const range = SPEED[provider];
  if (range && voice?.speed !== undefined && voice.speed !== 1) out.speed = clamp(voice.speed, range);
  if (provider === '11labs') {
    if (voice?.stability !== undefined) out.stability = voice.stability;
    if (voice?.similarity_boost !== undefined) out.similarityBoost = voice.similarity_boost;
  }
  return out;
}

/** Model providers a model may be named with (`anthropic/claude-…`); otherwise the name's family says. */
const MODEL_PROVIDERS = new Set(['openai', 'anthropic', 'google', 'groq']);

/** Vapi's model provider and model for the version's model name. */
export function vapiModelOf(name: string): { provider: string; model: string } {
  const slash = name.indexOf('/');
  if (slash > 0 && MODEL_PROVIDERS.has(name.slice(0, slash))) return { provider: name.slice(0, slash), model: name.slice(slash + 1) };
  if (name.startsWith('claude-')) return { provider: 'anthropic', model: name };
  if (name.startsWith('gemini-')) return { provider: 'google', model: name };
  return { provider: 'openai', model: name };
}

export function vapiModel(llm: Partial<Llm> | undefined, prompt: string, tools: Record<string, unknown>[]): Record<string, unknown> {
  return {
    ...vapiModelOf(llm?.model ?? 'gpt-4o-mini'),
    temperature: llm?.temperature ?? 0.7,
    // Vapi takes 50 to 10,000 tokens.
    maxTokens: clamp(llm?.max_tokens ?? 1024, [50, 10_000]),
    messages: prompt ? [{ role: 'system', content: prompt }] : [],
    ...(tools.length ? { tools } : {}),
  };
}

/** Languages Deepgram's transcriber takes at Vapi by their primary subtag (others: `multi`). */
const DEEPGRAM_LANGUAGES = new Set(
  'ar az ba be bg bn br bs ca cs da de el en es et eu fa fi fr ha haw he hi hr hu id is it ja jw kn ko ln lt lv mk mr ms nl no pl pt ro ru sk sl sn so sr su sv ta taq te th tl tr tt uk ur vi yo zh'.split(
    ' ',
  ),
);
/** Regional tags Deepgram's transcriber takes as such. */
const DEEPGRAM_REGIONAL = new Set(
  'da-DK de-CH en-AU en-CA en-GB en-IE en-IN en-NZ en-US es-419 fr-CA hi-Latn ko-KR nl-BE pt-BR pt-PT sv-SE th-TH zh-CN zh-HK zh-Hans zh-Hant zh-TW'.split(
    ' ',
  ),
);
/** Languages OpenAI's transcriber takes at Vapi (others: detected). */
const OPENAI_LANGUAGES = new Set(
  'af ar hy az be bs bg ca zh hr cs da nl en et fi fr gl de el he hi hu is id it ja kn kk ko lv lt mk ms mr mi ne no fa pl pt ro ru sr sk sl es sw sv tl ta th tr uk ur vi cy'.split(
    ' ',
  ),
);
/** A keyword Deepgram's `keywords` takes: one word, optionally `:boost`. */
const DEEPGRAM_KEYWORD = /^\p{L}[\p{L}\d]*(?::[+-]?\d+)?$/u;

export function vapiTranscriber(t: Partial<Transcriber> | undefined, language: string | undefined): Record<string, unknown> {
  const tag = language ?? 'en-US';
  const primary = tag.split('-')[0]!.toLowerCase();
  const keywords = t?.keywords ?? [];
  switch (t?.provider ?? 'deepgram') {
    case 'assemblyai':
      return { provider: 'assembly-ai', language: primary === 'en' ? 'en' : 'multi', ...(keywords.length ? { wordBoost: keywords } : {}) };
    case 'openai':
      return {
        provider: 'openai',
        model: t?.model ?? 'gpt-4o-mini-transcribe',
        ...(OPENAI_LANGUAGES.has(primary) ? { language: primary } : {}),
      };
    case 'azure':
      return { provider: 'azure', language: tag };
    default: {
      // Models before nova-3 take single-word `keywords`; nova-3 and flux (and an unnamed model) take `keyterm` phrases.
      const older = !!t?.model && !/^(nova-3|flux)/.test(t.model);
      const words = older ? keywords.filter((k) => DEEPGRAM_KEYWORD.test(k)) : keywords;
      return {
        provider: 'deepgram',
        ...(t?.model ? { model: t.model } : {}),
        language: DEEPGRAM_REGIONAL.has(tag) ? tag : DEEPGRAM_LANGUAGES.has(primary) ? primary : 'multi',
        ...(words.length ? { [older ? 'keywords' : 'keyterm']: words } : {}),
      };
    }
  }
}
