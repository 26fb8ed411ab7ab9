import type { z } from 'zod';
import type { SafeHttp } from './http';

/**
 * A refresher turns a credential's refresh input and current value into a new value. It runs inside an
 * activity (never in workflow code), and talks to the outside only through `http`, the safe fetcher.
 * Integrations register theirs beside the built-ins.
 */
export interface Refresher {
  id: string;
  kind: string;
  name: string;
  description: string;
  /** Checks `refresh_input` when a credential names this refresher. */
  inputSchema: z.ZodType;
  refresh(context: RefreshContext): Promise<RefreshResult>;
}

export interface RefreshContext {
  input: Record<string, unknown>;
  value: Record<string, unknown>;
  now: Date;
  http: SafeHttp;
}

export interface RefreshResult {
  /** Keys to set on the value; keys not named keep their current value. */
  value: Record<string, unknown>;
  expiresAt: Date | null;
}

/** A refresh that failed; `retryable` when another attempt may succeed (timeouts, 5xx, 429). */
export class RefreshError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'RefreshError';
  }
}
