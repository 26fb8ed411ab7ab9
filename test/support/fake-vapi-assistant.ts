// How the fake Vapi checks a transient assistant (CreateAssistantDTO), as Vapi's API does: class-validator
// with forbidNonWhitelisted, so a property the DTO lacks is refused ("assistant.voice.property x should
// not exist"), as are a provider it does not know, a model not in its provider's list, a Deepgram voice
// outside its enum, and values outside their ranges; messages are prefixed with their path as NestJS
// prefixes them. Only the parts the service renders are modelled; anything else is refused as unknown.
// Beyond the API's checks, `knownVoice` says whether the provider has the voice (a voice it lacks fails
// the call at Vapi once it speaks: the fake fails it the same way).

type Json = Record<string, unknown>;
const words = (list: string): string[] => list.split(' ');

const ASSISTANT = [
  'name',
  'firstMessage',
  'firstMessageMode',
  'model',
  'voice',
  'transcriber',
  'endCallMessage',
  'endCallPhrases',
  'voicemailDetection',
  'voicemailMessage',
  'maxDurationSeconds',
  // Named by Vapi's call-timeout page as an assistant field, though its generated schema leaves it out.
  'silenceTimeoutSeconds',
  'artifactPlan',
  'server',
  'serverMessages',
  'clientMessages',
  'metadata',
  'hooks',
  'analysisPlan',
  'backgroundSound',
  'startSpeakingPlan',
  'stopSpeakingPlan',
  'compliancePlan',
];
const SERVER = ['url', 'headers', 'timeoutSeconds', 'credentialId', 'backoffPlan', 'staticIpAddressesEnabled', 'encryptedPaths'];
const MODEL = words('provider model temperature maxTokens messages tools toolIds knowledgeBase emotionRecognitionEnabled');
const MODELS: Record<string, string[]> = {
  openai: ['gpt-4o-mini', 'gpt-4o', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'o3-mini', 'o4-mini'],
  anthropic: ['claude-3-5-haiku-20241022', 'claude-sonnet-4-20250514', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001'],
  google: ['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-2.0-flash'],
  groq: ['llama-3.3-70b-versatile', 'llama-3.1-8b-instant', 'openai/gpt-oss-120b'],
};
const VOICE: Record<string, string[]> = {
  '11labs': ['provider', 'voiceId', 'model', 'speed', 'stability', 'similarityBoost', 'style', 'useSpeakerBoost', 'language'],
  cartesia: ['provider', 'voiceId', 'model', 'language', 'experimentalControls'],
  openai: ['provider', 'voiceId', 'model', 'speed', 'instructions'],
  azure: ['provider', 'voiceId', 'speed'],
  deepgram: ['provider', 'voiceId', 'model'],
  playht: ['provider', 'voiceId', 'model', 'speed', 'temperature', 'emotion', 'language'],
};
const SPEED: Record<string, [number, number]> = { '11labs': [0.7, 1.2], openai: [0.25, 4], azure: [0.5, 2], playht: [0.1, 5] };
const DEEPGRAM_VOICES = words(
  'asteria luna stella athena hera orion arcas perseus angus orpheus helios zeus thalia andromeda helena apollo aries amalthea atlas aurora callista cora cordelia delia draco electra harmonia hermes hyperion iris janus juno jupiter mars minerva neptune odysseus ophelia pandora phoebe pluto saturn selene theia vesta celeste estrella nestor sirio carina alvaro diana aquila selena javier',
);
/** Voices each provider has (presets Vapi names, and the ids its examples use); any other fails the call. */
const VOICES: Record<string, string[]> = {
  '11labs': words(
    'burt marissa andrea sarah phillip steve joseph myra paula ryan drew paul mrb matilda mark 21m00Tcm4TlvDq8ikWAM cgSgspJ2msm6clMCkdW9',
  ),
  cartesia: ['248be419-c632-4f23-adf1-5324ed7dbf1d', 'a0e99841-438c-4a64-b679-ae501e7d6091'],
  openai: ['alloy', 'echo', 'fable', 'onyx', 'nova', 'shimmer', 'marin', 'cedar'],
  azure: words('andrew brian emma en-US-AriaNeural en-US-JennyNeural fr-FR-DeniseNeural es-ES-ElviraNeural de-DE-KatjaNeural'),
  deepgram: DEEPGRAM_VOICES,
  playht: ['jennifer', 'melissa', 'will', 'chris', 'matt', 'jack', 'ruby', 'davis', 'donna', 'michael'],
};
const TRANSCRIBER: Record<string, string[]> = {
  deepgram: ['provider', 'model', 'language', 'keywords', 'keyterm', 'smartFormat', 'endpointing'],
  'assembly-ai': ['provider', 'language', 'wordBoost', 'keytermsPrompt'],
  openai: ['provider', 'model', 'language'],
  azure: ['provider', 'language'],
};
const SERVER_MESSAGES = words(
  'status-update end-of-call-report tool-calls transcript hang conversation-update speech-update transfer-update user-interrupted',
);
const FUNCTION_TOOL = ['type', 'function', 'server', 'messages', 'async', 'parameters', 'rejectionPlan', 'variableExtractionPlan'];
const DESTINATION: Record<string, string[]> = {
  number: ['type', 'number', 'message', 'description', 'transferPlan', 'callerId', 'extension', 'numberE164CheckEnabled'],
  sip: ['type', 'sipUri', 'message', 'description', 'transferPlan', 'sipHeaders', 'callerId'],
};
const TRANSFER_MODES = [
  'blind-transfer',
  'blind-transfer-add-summary-to-sip-header',
  'warm-transfer-say-message',
  'warm-transfer-say-summary',
];
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

class Checker {
  readonly found: string[] = [];
  add(path: string, message: string) {
    this.found.push(path ? `${path}.${message}` : message);
  }
  /** forbidNonWhitelisted */
  only(path: string, value: Json, allowed: string[]) {
    for (const key of Object.keys(value)) if (!allowed.includes(key)) this.add(path, `property ${key} should not exist`);
  }
  oneOf(path: string, name: string, value: unknown, allowed: string[]) {
    if (!allowed.includes(value as string)) this.add(path, `${name} must be one of the following values: ${allowed.join(', ')}`);
  }
  range(path: string, name: string, value: unknown, [min, max]: [number, number]) {
    if (value === undefined) return;
    if (typeof value !== 'number') this.add(path, `${name} must be a number conforming to the specified constraints`);
    else if (value < min) this.add(path, `${name} must not be less than ${min}`);
    else if (value > max) this.add(path, `${name} must not be greater than ${max}`);
  }
  string(path: string, name: string, value: unknown, max = Number.POSITIVE_INFINITY) {
    if (typeof value !== 'string') this.add(path, `${name} must be a string`);
    else if (value.length > max) this.add(path, `${name} must be shorter than or equal to ${max} characters`);
  }
}

function checkServer(c: Checker, path: string, server: unknown) {
  if (!isObject(server)) return c.add(path, 'server must be an object');
  c.only(`${path}.server`, server, SERVER);
  if (typeof server.url !== 'string' || !/^https?:\/\//.test(server.url)) c.add(`${path}.server`, 'url must be a URL address');
  if (server.headers !== undefined && !isObject(server.headers)) c.add(`${path}.server`, 'headers must be an object');
  c.range(`${path}.server`, 'timeoutSeconds', server.timeoutSeconds, [1, 300]);
}

function checkTool(c: Checker, path: string, tool: unknown) {
  if (!isObject(tool)) return c.add(path, 'each value in tools must be an object');
  if (tool.type === 'function') {
    c.only(path, tool, FUNCTION_TOOL);
    const fn = tool.function;
    if (!isObject(fn)) return c.add(path, 'function must be an object');
    c.only(`${path}.function`, fn, ['name', 'description', 'parameters', 'strict']);
    if (typeof fn.name !== 'string' || !FUNCTION_NAME.test(fn.name))
      c.add(`${path}.function`, 'name must match /^[a-zA-Z0-9_-]{1,64}$/ regular expression');
    const p = fn.parameters;
    if (p !== undefined && (!isObject(p) || p.type !== 'object' || !isObject(p.properties)))
      c.add(`${path}.function.parameters`, 'type must be one of the following values: object; properties must be an object');
    if (tool.server !== undefined) checkServer(c, path, tool.server);
  } else if (tool.type === 'transferCall') {
    c.only(path, tool, ['type', 'destinations', 'messages', 'rejectionPlan']);
    const destinations = Array.isArray(tool.destinations) ? tool.destinations : [];
    for (const [i, d] of (destinations as unknown[]).entries()) {
      const at = `${path}.destinations.${i}`;
      if (!isObject(d) || !DESTINATION[d.type as string]) {
        c.add(at, 'type must be one of the following values: assistant, number, sip');
        continue;
      }
      c.only(at, d, DESTINATION[d.type as string]!);
      if (d.type === 'number' && (typeof d.number !== 'string' || !/^\+[1-9]\d{1,14}$/.test(d.number)))
        c.add(at, 'number must be a valid phone number in the E.164 format');
      if (d.type === 'sip' && (typeof d.sipUri !== 'string' || !/^sips?:/.test(d.sipUri))) c.add(at, 'sipUri must be a valid SIP URI');
      if (d.transferPlan !== undefined) {
        if (!isObject(d.transferPlan)) c.add(at, 'transferPlan must be an object');
        else c.oneOf(`${at}.transferPlan`, 'mode', d.transferPlan.mode, TRANSFER_MODES);
      }
    }
  } else if (tool.type === 'endCall') c.only(path, tool, ['type', 'messages', 'rejectionPlan']);
  else c.add(path, 'type must be one of the following values: function, transferCall, endCall, dtmf, query, voicemail, …');
  if (tool.messages !== undefined) {
    const list = Array.isArray(tool.messages) ? tool.messages : [];
    for (const [i, m] of (list as unknown[]).entries()) {
      const at = `${path}.messages.${i}`;
      if (!isObject(m)) {
        c.add(at, 'must be an object');
        continue;
      }
      c.oneOf(at, 'type', m.type, ['request-start', 'request-complete', 'request-failed', 'request-response-delayed']);
      if (m.content !== undefined) c.string(at, 'content', m.content, 1000);
    }
  }
}

/** Vapi's 400 messages for a transient assistant (empty: accepted). */
export function assistantProblems(assistant: Json): string[] {
  const c = new Checker();
  const at = 'assistant';
  c.only(at, assistant, ASSISTANT);
  if (assistant.name !== undefined) c.string(at, 'name', assistant.name, 40);
  if (assistant.firstMessageMode !== undefined)
    c.oneOf(at, 'firstMessageMode', assistant.firstMessageMode, [
      'assistant-speaks-first',
      'assistant-speaks-first-with-model-generated-message',
      'assistant-waits-for-user',
    ]);
  const model = assistant.model;
  if (!isObject(model)) c.add(at, 'model must be an object');
  else {
    c.oneOf(`${at}.model`, 'provider', model.provider, Object.keys(MODELS));
    const known = MODELS[model.provider as string];
    if (known) {
      c.only(`${at}.model`, model, MODEL);
      c.oneOf(`${at}.model`, 'model', model.model, known);
    }
    c.range(`${at}.model`, 'temperature', model.temperature, [0, 2]);
    c.range(`${at}.model`, 'maxTokens', model.maxTokens, [50, 10_000]);
    if (model.messages !== undefined && !Array.isArray(model.messages)) c.add(`${at}.model`, 'messages must be an array');
    if (model.tools !== undefined) {
      if (!Array.isArray(model.tools)) c.add(`${at}.model`, 'tools must be an array');
      else for (const [i, t] of (model.tools as unknown[]).entries()) checkTool(c, `${at}.model.tools.${i}`, t);
    }
  }
  const voice = assistant.voice;
  if (voice !== undefined) {
    if (!isObject(voice)) c.add(at, 'voice must be an object');
    else {
      c.oneOf(`${at}.voice`, 'provider', voice.provider, Object.keys(VOICE));
      const allowed = VOICE[voice.provider as string];
      if (allowed) c.only(`${at}.voice`, voice, allowed);
      c.string(`${at}.voice`, 'voiceId', voice.voiceId);
      if (voice.provider === 'deepgram') c.oneOf(`${at}.voice`, 'voiceId', voice.voiceId, DEEPGRAM_VOICES);
      const speed = SPEED[voice.provider as string];
      if (speed) c.range(`${at}.voice`, 'speed', voice.speed, speed);
      if (voice.provider === '11labs') {
        c.range(`${at}.voice`, 'stability', voice.stability, [0, 1]);
        c.range(`${at}.voice`, 'similarityBoost', voice.similarityBoost, [0, 1]);
      }
    }
  }
  const transcriber = assistant.transcriber;
  if (transcriber !== undefined) {
    if (!isObject(transcriber)) c.add(at, 'transcriber must be an object');
    else {
      c.oneOf(`${at}.transcriber`, 'provider', transcriber.provider, Object.keys(TRANSCRIBER));
      const allowed = TRANSCRIBER[transcriber.provider as string];
      if (allowed) c.only(`${at}.transcriber`, transcriber, allowed);
      if (transcriber.provider === 'assembly-ai') c.oneOf(`${at}.transcriber`, 'language', transcriber.language, ['multi', 'en']);
      if (transcriber.provider === 'openai')
        c.oneOf(`${at}.transcriber`, 'model', transcriber.model, ['gpt-4o-transcribe', 'gpt-4o-mini-transcribe']);
      if (transcriber.provider === 'deepgram' && Array.isArray(transcriber.keywords))
        for (const k of transcriber.keywords)
          if (typeof k !== 'string' || !/^\p{L}[\p{L}\d]*(?::[+-]?\d+)?$/u.test(k))
            c.add(`${at}.transcriber`, 'each value in keywords must match /^\\p{L}[\\p{L}\\d]*(?::[+-]?\\d+)?$/u regular expression');
    }
  }
  if (assistant.endCallMessage !== undefined) c.string(at, 'endCallMessage', assistant.endCallMessage, 1000);
  if (assistant.voicemailMessage !== undefined) c.string(at, 'voicemailMessage', assistant.voicemailMessage, 1000);
  if (assistant.endCallPhrases !== undefined)
    for (const p of Array.isArray(assistant.endCallPhrases) ? assistant.endCallPhrases : [null])
      if (typeof p !== 'string' || p.length < 2 || p.length > 140)
        c.add(at, 'each value in endCallPhrases must be longer than or equal to 2 and shorter than or equal to 140 characters');
  const vm = assistant.voicemailDetection;
  if (vm !== undefined && vm !== 'off') {
    if (!isObject(vm)) c.add(at, 'voicemailDetection must be an object');
    else c.oneOf(`${at}.voicemailDetection`, 'provider', vm.provider, ['vapi', 'google', 'openai', 'twilio']);
  }
  c.range(at, 'maxDurationSeconds', assistant.maxDurationSeconds, [10, 43_200]);
  c.range(at, 'silenceTimeoutSeconds', assistant.silenceTimeoutSeconds, [5, 3600]);
  if (assistant.artifactPlan !== undefined) {
    if (!isObject(assistant.artifactPlan)) c.add(at, 'artifactPlan must be an object');
    else
      c.only(`${at}.artifactPlan`, assistant.artifactPlan, [
        'recordingEnabled',
        'recordingFormat',
        'videoRecordingEnabled',
        'transcriptPlan',
      ]);
  }
  if (assistant.server !== undefined) checkServer(c, at, assistant.server);
  if (assistant.serverMessages !== undefined)
    for (const m of Array.isArray(assistant.serverMessages) ? assistant.serverMessages : [null])
      c.oneOf(at, 'each value in serverMessages', m, SERVER_MESSAGES);
  return c.found;
}

/** Whether the provider has this voice (the API takes any id for most providers; the call fails at the first words). */
export const knownVoice = (provider: string, voiceId: string): boolean => VOICES[provider]?.includes(voiceId) ?? false;

/** The `pipeline-error-…-voice-failed` reason Vapi ends a call with when its voice cannot speak. */
export const voiceFailedReason = (provider: string) => `pipeline-error-${provider === '11labs' ? 'eleven-labs' : provider}-voice-failed`;
