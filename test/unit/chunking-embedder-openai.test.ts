import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbedderError, createEmbedder, embedderFor } from '../../platform/adapters/embedders/embedder';
import { OpenAiEmbedder } from '../../platform/adapters/embedders/openai';
import { fakeEmbedding, startFakeEmbeddingsServer, type FakeEmbeddingsServer } from '../support/fake-embeddings-server';

// The OpenAI-compatible embedder against a local server speaking that protocol.

let server: FakeEmbeddingsServer;
beforeAll(async () => {
  server = await startFakeEmbeddingsServer();
});
afterAll(async () => server.close());

describe('OpenAI-compatible embedder', () => {
  it('sends the model and inputs with the key and returns vectors in input order', async () => {
    const embedder = new OpenAiEmbedder({ baseUrl: server.baseUrl, model: 'm1', apiKey: server.apiKey });
    const vectors = await embedder.embed(['car', 'doctor']);
    expect(vectors).toEqual([fakeEmbedding('car'), fakeEmbedding('doctor')]);
    expect(embedder.dimension).toBe(32);
    expect(server.requests.at(-1)).toEqual({ model: 'm1', input: ['car', 'doctor'] });
  });
  it('treats 5xx as retryable and 401 as not', async () => {
    server.failNext(1, 503);
    const embedder = new OpenAiEmbedder({ baseUrl: `${server.baseUrl}/v1`, model: 'm1', apiKey: server.apiKey });
    await expect(embedder.embed(['x'])).rejects.toMatchObject({ retryable: true });
    const wrongKey = new OpenAiEmbedder({ baseUrl: server.baseUrl, model: 'm1', apiKey: 'nope' });
    const error = await wrongKey.embed(['x']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedderError);
    expect((error as EmbedderError).retryable).toBe(false);
    expect(String(error)).not.toContain('nope');
  });
  it('is chosen by EMBEDDINGS_BASE_URL, else the built-in embedder', () => {
    expect(
      createEmbedder({ EMBEDDINGS_BASE_URL: server.baseUrl, EMBEDDINGS_MODEL: 'm2', EMBEDDINGS_API_KEY: 'k', EMBEDDINGS_INPUT_TYPE: false })
        .model,
    ).toBe('m2');
    expect(
      createEmbedder({
        EMBEDDINGS_BASE_URL: undefined,
        EMBEDDINGS_MODEL: undefined,
        EMBEDDINGS_API_KEY: undefined,
        EMBEDDINGS_INPUT_TYPE: false,
      }).model,
    ).toBe('builtin-hashing-384');
  });
  it('says input_type (query or passage) only when configured to', async () => {
    const config = { EMBEDDINGS_BASE_URL: server.baseUrl, EMBEDDINGS_MODEL: 'e5', EMBEDDINGS_API_KEY: server.apiKey };
    await createEmbedder({ ...config, EMBEDDINGS_INPUT_TYPE: true }).embed(['how do I reset it'], 'query');
    expect(server.requests.at(-1)).toMatchObject({ input_type: 'query' });
    await createEmbedder({ ...config, EMBEDDINGS_INPUT_TYPE: true }).embed(['Reset: hold the button.']);
    expect(server.requests.at(-1)).toMatchObject({ input_type: 'passage' });
    await createEmbedder({ ...config, EMBEDDINGS_INPUT_TYPE: false }).embed(['how do I reset it'], 'query');
    expect(server.requests.at(-1)).not.toHaveProperty('input_type');
  });
  it('sends queries to EMBEDDINGS_QUERY_BASE_URL when set, and passages to EMBEDDINGS_BASE_URL', async () => {
    const queries = await startFakeEmbeddingsServer();
    try {
      const config = {
        EMBEDDINGS_BASE_URL: server.baseUrl,
        EMBEDDINGS_MODEL: 'e5',
        EMBEDDINGS_API_KEY: server.apiKey,
        EMBEDDINGS_INPUT_TYPE: true,
      };
      const embedder = createEmbedder({ ...config, EMBEDDINGS_QUERY_BASE_URL: queries.baseUrl });
      const before = server.requests.length;
      await embedder.embed(['how do I reset it'], 'query');
      await embedder.embed(['Reset: hold the button.'], 'passage');
      expect(queries.requests.map((r) => r.input_type)).toEqual(['query']);
      expect(server.requests.slice(before).map((r) => r.input_type)).toEqual(['passage']);
    } finally {
      await queries.close();
    }
  });
  it("picks the embedder of a dataset's model: the configured one, the built-in one, or none", () => {
    const config = { EMBEDDINGS_BASE_URL: server.baseUrl, EMBEDDINGS_MODEL: 'e5', EMBEDDINGS_API_KEY: 'k', EMBEDDINGS_INPUT_TYPE: true };
    expect(embedderFor(config, 'e5')).toBeInstanceOf(OpenAiEmbedder);
    expect(embedderFor(config, 'builtin-hashing-384')?.model).toBe('builtin-hashing-384');
    expect(embedderFor(config, 'text-embedding-3-large')).toBeUndefined();
  });
});
