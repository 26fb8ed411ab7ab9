import type postgres from 'postgres';

/** Characters sent to the server per write: large enough to keep COPY fast, small enough to bound memory. */
const CHUNK_CHARS = 1 << 20;

/**
 * Streams `lines` (already in COPY text format) into a `COPY ... FROM STDIN` query and settles with the
 * server's verdict: resolves once the server has taken every row, throws the server's error otherwise.
 *
 * postgres.js (3.4.9) never finishes the writable of a COPY the server refused after the last chunk was
 * sent: it hands the refusal to the query, which has already resolved (with the stream), and the stream
 * neither finishes nor errors. Waiting on the stream alone would keep the caller, and its transaction's
 * connection, forever. So the query's rejection is watched too: a refused COPY (a value the column type
 * refuses, statement_timeout, a closed connection) ends the wait at once, and the caller's transaction
 * rolls back and gives its connection back.
 */
export async function copyIn(query: postgres.PendingQuery<postgres.Row[]>, lines: Iterable<string>): Promise<void> {
  const stream = await query.writable();
  let failure: unknown;
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const fail = (error: unknown) => {
    failure ??= error;
    settle();
  };
  stream.once('finish', settle);
  stream.once('close', settle); // destroyed: 'error' came first
  stream.on('error', fail);
  const restore = onRejected(query, fail);
  // Waits until the stream takes more, or the COPY has ended either way.
  const room = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        stream.off('drain', done);
        resolve();
      };
      stream.once('drain', done);
      void settled.then(done);
    });
  try {
    let buffer = '';
    for (const line of lines) {
      buffer += line;
      if (buffer.length < CHUNK_CHARS) continue;
      const more = stream.write(buffer);
      buffer = '';
      if (!more) await room();
      if (failure !== undefined) break;
    }
    if (failure === undefined) stream.end(buffer);
    await settled;
  } finally {
    restore();
  }
  if (failure !== undefined) throw failure;
}

/** Calls `listener` when postgres.js rejects the (already resolved) query; returns the undo. */
function onRejected(query: object, listener: (error: unknown) => void): () => void {
  const internal = query as { reject?: (error: unknown) => void };
  const original = internal.reject;
  if (typeof original !== 'function') throw new Error('postgres.js query has no reject(): COPY refusals could not be seen');
  internal.reject = (error) => {
    listener(error);
    original(error);
  };
  return () => {
    internal.reject = original;
  };
}
