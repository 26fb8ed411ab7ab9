import crypto from 'node:crypto';
import type { Config } from '../../core/config';
import type { SpeechProvider } from '../../../domain/integrations';

// Whether an API key opens a speech or model provider's account, asked with each provider's cheapest
// authenticated read: Deepgram's projects, ElevenLabs' user, Cartesia's voices, the models of an
// OpenAI-compatible server. Bounded by INTEGRATION_HTTP_TIMEOUT_MS.

export type SpeechKeyConfig = Pick<
  Config,
  | 'DEEPGRAM_API_BASE_URL'
  | 'ELEVENLABS_API_BASE_URL'
  | 'CARTESIA_API_BASE_URL'
  | 'CARTESIA_VERSION'
  | 'OPENAI_API_BASE_URL'
  | 'INTEGRATION_HTTP_TIMEOUT_MS'
>;

/** The provider refused the key (401/403). */
export class SpeechKeyRefused extends Error {}
/** The provider failed or did not answer in time. */
export class SpeechProviderFailed extends Error {}

export interface VerifiedSpeechKey {
  /** A fingerprint of the key (its SHA-256, cut): the connection's external id, never the key. */
  external_id: string;
  label: string;
}

const base = (url: string) => url.replace(/\/+$/, '');

/** The request that checks a key, per provider. */
export function keyCheck(
  config: SpeechKeyConfig,
  provider: SpeechProvider,
  apiKey: string,
): { url: string; headers: Record<string, string> } {
  switch (provider) {
    case 'deepgram':
      return { url: `${base(config.DEEPGRAM_API_BASE_URL)}/v1/projects`, headers: { Authorization: `Token ${apiKey}` } };
    case 'elevenlabs':
      return { url: `${base(config.ELEVENLABS_API_BASE_URL)}/v1/user`, headers: { 'xi-api-key': apiKey } };
    case 'cartesia':
      return {
        url: `${base(config.CARTESIA_API_BASE_URL)}/voices?limit=1`,
        headers: { 'X-API-Key': apiKey, Authorization: `Bearer ${apiKey}`, 'Cartesia-Version': config.CARTESIA_VERSION },
      };
    case 'openai':
      return { url: `${base(config.OPENAI_API_BASE_URL)}/models`, headers: { Authorization: `Bearer ${apiKey}` } };
  }
}

export async function verifySpeechKey(config: SpeechKeyConfig, provider: SpeechProvider, apiKey: string): Promise<VerifiedSpeechKey> {
  const { url, headers } = keyCheck(config, provider, apiKey);
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { ...headers, Accept: 'application/json' },
      signal: AbortSignal.timeout(config.INTEGRATION_HTTP_TIMEOUT_MS),
    });
    await response.arrayBuffer();
  } catch (error) {
    const reason =
      (error as Error).name === 'TimeoutError' ? `no answer within ${config.INTEGRATION_HTTP_TIMEOUT_MS} ms` : (error as Error).message;
    throw new SpeechProviderFailed(reason);
  }
  if (response.status === 401 || response.status === 403)
    throw new SpeechKeyRefused(`the provider refused the API key (${response.status})`);
  if (!response.ok) throw new SpeechProviderFailed(`the provider answered ${response.status}`);
  return { external_id: keyFingerprint(apiKey), label: `API key …${apiKey.slice(-4)}` };
}

export const keyFingerprint = (apiKey: string): string => `sha256:${crypto.createHash('sha256').update(apiKey).digest('hex').slice(0, 16)}`;
