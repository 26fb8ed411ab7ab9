import type { Config } from './config';
import { HashingEmbedder } from './embedder-hashing';
import { OpenAiEmbedder } from './embedder-openai';
import type { Embedder } from './embedder-types';

export { EmbedderError, type Embedder } from './embedder-types';

/** The OpenAI-compatible service when EMBEDDINGS_BASE_URL is set, else the built-in offline embedder. */
export function createEmbedder(config: Pick<Config, 'EMBEDDINGS_BASE_URL' | 'EMBEDDINGS_MODEL' | 'EMBEDDINGS_API_KEY'>): Embedder {
  if (config.EMBEDDINGS_BASE_URL) {
    return new OpenAiEmbedder({ baseUrl: config.EMBEDDINGS_BASE_URL, model: config.EMBEDDINGS_MODEL ?? 'text-embedding-3-small', apiKey: config.EMBEDDINGS_API_KEY });
  }
  return new HashingEmbedder();
}

/** The model name a dataset created now is bound to, without calling anything. */
export function embedderIdentity(config: Pick<Config, 'EMBEDDINGS_BASE_URL' | 'EMBEDDINGS_MODEL' | 'EMBEDDINGS_API_KEY'>): { model: string } {
  return { model: createEmbedder(config).model };
}
