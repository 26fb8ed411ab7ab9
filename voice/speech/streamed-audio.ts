import type WebSocket from 'ws';

// The audio a provider's socket sends for one sentence, as an async iterable: chunks queued as they come,
// the first one awaited within a bound, each next one within another, the socket closed when the turn is
// cut (the signal) or the sentence is done.

export interface AudioStreamHandlers {
  /** Audio (if any) of one message; `done` when the provider says the sentence is complete; throws for its errors. */
  read(text: string): { audio: Int16Array | null; done: boolean };
}

export async function* streamedAudio(
  socket: WebSocket,
  handlers: AudioStreamHandlers,
  bounds: { firstMs: number; idleMs: number; what: string },
  signal: AbortSignal,
): AsyncIterable<Int16Array> {
  const queue: Int16Array[] = [];
  let done = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const poke = () => {
    wake?.();
    wake = null;
  };
  socket.on('message', (data, binary) => {
    if (binary || done) return;
    try {
      const { audio, done: finished } = handlers.read(String(data));
      if (audio?.length) queue.push(audio);
      if (finished) done = true;
    } catch (error) {
      failure = error as Error;
    }
    poke();
  });
  socket.on('error', (error) => {
    failure ??= new Error(`${bounds.what}: ${error.message}`);
    poke();
  });
  socket.on('close', (code, reason) => {
    if (!done) failure ??= new Error(`${bounds.what} closed before the speech was done (${code}${reason.length ? ` ${reason}` : ''})`);
    poke();
  });
  const abort = () => poke();
  signal.addEventListener('abort', abort);
  let first = true;
  try {
    for (;;) {
      if (signal.aborted) return;
      if (queue.length) {
        first = false;
        yield queue.shift()!;
        continue;
      }
      if (done) return;
      if (failure) throw failure;
      const waitMs = first ? bounds.firstMs : bounds.idleMs;
      const arrived = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), waitMs);
        wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      if (!arrived && !queue.length && !done && !signal.aborted)
        throw new Error(`${bounds.what} sent no audio within ${waitMs} ms${first ? '' : ' of the last'}`);
    }
  } finally {
    signal.removeEventListener('abort', abort);
    socket.terminate();
  }
}
