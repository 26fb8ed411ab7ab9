// The embedder contract, apart from the factory so each implementation imports it without a circle.

/**
 * What a text is for: asymmetric models (e5 and its kin) embed a question and a passage differently,
 * and are trained with that distinction. Symmetric embedders ignore it.
 */
export type EmbedKind = 'query' | 'passage';

/**
 * Turns texts into vectors of one space. `model` names the space (it is stored with every chunk and
 * on every dataset, so vectors of two embedders are never compared); `dimension` is its length.
 */
export interface Embedder {
  readonly model: string;
  readonly dimension: number;
  /** True when the vectors only encode words (the built-in hashing embedder): retrieval then trusts full text more. */
  readonly lexical?: boolean;
  /** One vector per text, in order, each of length `dimension`. */
  embed(texts: string[], kind?: EmbedKind): Promise<number[][]>;
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
