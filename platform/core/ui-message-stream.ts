import { Readable } from 'node:stream';
import type { StoredFrame } from '../../domain/ui-message-stream';

/**
 * The wire form of the AI SDK UI message stream protocol v1: `id:`/`data: {json}` server-sent events,
 * `data: [DONE]` at the end, comment lines as keep-alives. The headers make `useChat` accept the
 * stream and keep proxies from buffering or compressing it.
 */
export const UI_MESSAGE_STREAM_HEADERS: Record<string, string> = {
  'x-vercel-ai-ui-message-stream': 'v1',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
  'Content-Encoding': 'identity',
  Connection: 'keep-alive',
};

export const UI_MESSAGE_STREAM_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

/** One stored frame as an SSE event: its id, then the JSON frame or `[DONE]`. */
export function encodeFrame({ id, frame }: StoredFrame): string {
  return `id: ${id}\ndata: ${frame === null ? '[DONE]' : JSON.stringify(frame)}\n\n`;
}

export const KEEP_ALIVE = ': keep-alive\n\n';
export const DONE = 'data: [DONE]\n\n';

export interface SseOptions {
  /** A comment line after this long without a frame, so idle connections stay open through proxies. */
  keepAliveMs: number;
  /** Called once when the response ends or the client goes away (the source stops waiting). */
  onClose?: () => void;
}

/**
 * The SSE body of a stream of frames: every frame encoded as it comes, a keep-alive comment whenever
 * `keepAliveMs` passes without one, and the source closed (its `return()` called) when the client goes.
 * The source ends the stream by yielding its `[DONE]` frame (null) and returning.
 */
export function sseBody(source: AsyncIterable<StoredFrame>, options: SseOptions): Readable {
  const iterator = source[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const body = new Readable({
    read() {},
    destroy(error, callback) {
      clearTimeout(timer);
      options.onClose?.();
      void iterator.return?.();
      callback(error);
    },
  });
  const keepAlive = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (body.destroyed) return;
      body.push(KEEP_ALIVE);
      keepAlive();
    }, options.keepAliveMs);
    timer.unref();
  };
  keepAlive();
  void (async () => {
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done || body.destroyed) break;
        body.push(encodeFrame(next.value));
        keepAlive();
      }
    } catch (error) {
      // The source failed (its database went away): say so in the protocol and end the stream.
      if (!body.destroyed)
        body.push(`data: ${JSON.stringify({ type: 'error', errorText: `Stream interrupted: ${(error as Error).message}` })}\n\n${DONE}`);
    } finally {
      clearTimeout(timer);
      if (!body.destroyed) body.push(null);
    }
  })();
  return body;
}
