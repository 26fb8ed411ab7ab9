import crypto from 'node:crypto';
import * as keys from '../db/idempotency';
import type { KeyScope } from '../db/idempotency';
import { outsideRequestScope } from '../platform/core/request-scope';
import { type Keyring, keyringFor, loadMasterKey, open, parsePreviousKeys, seal } from '../platform/core/secrets';
import type { ServiceDeps } from './deps';

// Idempotency-Key (Stripe's practice, IETF draft-ietf-httpapi-idempotency-key-header): the first request
// under a key claims it before its handler runs; its answer is kept for IDEMPOTENCY_KEY_TTL_SECONDS and
// replayed to the same request sent again. Answers are sealed (AES-256-GCM), since some carry a secret
// shown once (a new API key).

export type { KeyScope };

export interface Answer {
  status: number;
  headers: Record<string, string | string[]>;
  /** The body as sent (JSON text, or nothing). */
  body: string;
}

export type Claim =
  | { kind: 'claimed'; claim: string }
  | { kind: 'replay'; answer: Answer }
  /** Another request under the key is still running. */
  | { kind: 'running' }
  /** The key was used with another request (method, path, query or body). */
  | { kind: 'mismatch' };

/** SHA-256 of what makes two requests the same: method, path with its query, and the body's bytes. */
export function fingerprintOf(method: string, pathAndQuery: string, body: string | Buffer): Buffer {
  return crypto.createHash('sha256').update(`${method}\n${pathAndQuery}\n`).update(body).digest();
}

/** How often a process deletes expired keys (after a claim, at most this often). */
const SWEEP_INTERVAL_MS = 60_000;
/** A claim whose request cannot finish (its process died) lapses this long after the request's deadline. */
const LOCK_MARGIN_MS = 5000;

export class IdempotencyKeys {
  private ring: Keyring | undefined;
  private lastSweep = 0;

  constructor(private readonly deps: Pick<ServiceDeps, 'sql' | 'config' | 'logger'>) {}

  /** Claims `scope`'s key for a request with `fingerprint`, or says what holds it. */
  async claim(scope: KeyScope, request: { method: string; path: string; fingerprint: Buffer }): Promise<Claim> {
    this.sweepNow();
    const { config, sql } = this.deps;
    // Another request may finish (and free a 5xx) between the claim and the read: try again, a few times.
    for (let attempt = 0; attempt < 3; attempt++) {
      const claim = crypto.randomUUID();
      const claimed = await keys.claimKey(sql, scope, {
        ...request,
        claim,
        lockMs: config.REQUEST_TIMEOUT_MS + LOCK_MARGIN_MS,
        ttlSeconds: config.IDEMPOTENCY_KEY_TTL_SECONDS,
      });
      if (claimed) return { kind: 'claimed', claim };
      const row = await keys.readKey(sql, scope);
      if (!row) continue;
      if (!row.fingerprint.equals(request.fingerprint)) return { kind: 'mismatch' };
      if (row.status === null) return { kind: 'running' };
      return { kind: 'replay', answer: { status: row.status, headers: row.response_headers ?? {}, body: this.openBody(scope, row) } };
    }
    return { kind: 'running' };
  }

  /**
   * Keeps the answer of the request holding the key. Outside the request's deadline: a handler that
   * finished after its request answered 503 still leaves its real answer for the retry.
   */
  async complete(scope: KeyScope, claim: string, answer: Answer): Promise<void> {
    const sealed = seal(this.keyring(), answer.body, associated(scope));
    await outsideRequestScope(() =>
      keys.completeKey(this.deps.sql, scope, claim, {
        status: answer.status,
        headers: answer.headers,
        keyId: sealed.keyId,
        body: sealed.ciphertext,
      }),
    );
  }

  /** Frees the key for another try (the request ended in a 5xx, or with an answer that cannot be kept). */
  async release(scope: KeyScope, claim: string): Promise<void> {
    await outsideRequestScope(() => keys.releaseKey(this.deps.sql, scope, claim));
  }

  private openBody(scope: KeyScope, row: keys.KeyRow): string {
    return row.response_body === null ? '' : open(this.keyring(), row.response_key_id!, row.response_body, associated(scope));
  }

  private keyring(): Keyring {
    const { config } = this.deps;
    this.ring ??= keyringFor(
      'idempotent-answers',
      loadMasterKey(config.ENCRYPTION_KEY, config.dataDir),
      parsePreviousKeys(config.ENCRYPTION_KEYS_PREVIOUS),
    );
    return this.ring;
  }

  /** Expired keys are never read (every query checks expires_at); deleting them only keeps the table small. */
  private sweepNow(): void {
    const now = Date.now();
    if (now - this.lastSweep < SWEEP_INTERVAL_MS) return;
    this.lastSweep = now;
    outsideRequestScope(() => keys.sweepKeys(this.deps.sql)).catch((err: unknown) =>
      this.deps.logger.debug({ err }, 'idempotency keys not swept'),
    );
  }
}

/** The sealed answer opens only under its own key. */
const associated = (scope: KeyScope) => `idempotency:${scope.orgId}:${scope.principal}:${scope.key}`;
