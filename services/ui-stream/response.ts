import type { Readable } from 'node:stream';
import type { Sql } from '../../db/client';
import type { Logger } from '../../platform/core/logger';
import { sseBody } from '../../platform/core/ui-message-stream';
import { tailFrames } from './replay';

export interface StreamResponseOptions {
  orgId: string;
  streamId: string;
  /** Frames after this id are sent, up to the end of their segment. */
  afterId: number;
  keepAliveMs: number;
  idleTimeoutMs: number;
}

/**
 * The SSE body of a UI message stream read from its stored frames: replayed from `afterId`, then live.
 * A client that goes away stops only its reader; the writer (a workflow's activity) goes on.
 */
export function streamResponse(deps: { sql: Sql; logger: Logger }, options: StreamResponseOptions): Readable {
  const reader = new AbortController();
  const source = tailFrames(deps, { ...options, signal: reader.signal });
  return sseBody(source, { keepAliveMs: options.keepAliveMs, onClose: () => reader.abort() });
}
