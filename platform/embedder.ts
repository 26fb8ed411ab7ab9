import type { Config } from './config';
import { HashingEmbedder } from './embedder-hashing';
import { OpenAiEmbedder } from './embedder-openai';

/**
 * Turns texts into vectors of one space. `model` names the space (it is stored with every chunk and
 * on every dataset, so vectors of two embedders are never compared); `dimension` is its length.
 */
export interface Embedder {
  readonly model: string;
  readonly dimension: number;
  /** One vector per text, in order, each of length `dimension`. */
  embed(texts: string[]): Promise<number[][]>;
}

/** A failure of the embedding service worth retrying later (network, 429, 5xx) or not (4xx, bad shape). */
export class EmbedderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'EmbedderError';
  }
}

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
