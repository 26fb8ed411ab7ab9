import { setTimeout as sleep } from 'node:timers/promises';
import { SignJWT, createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { addressSubject } from '../../platform/core/client-address';
import { sha256 } from '../../platform/core/secrets';
import { isDomainError, rateLimited } from '../../domain/errors';
import type { ServiceDeps } from '../../services/deps';
import * as identity from '../../services/token-identity';
import { HttpError, unauthorized } from '../errors';
import { AttemptLimiter, Semaphore } from './attempt-limiter';
import { KeyProofs } from './key-proofs';
import type { TokenKind } from './context';
import { TokenCache } from './token-cache';
import { isPrefixedToken, parseToken, verifySecret } from './tokens';

/** What a bearer token proves, resolved to the service's ids; cached by token hash. */
export interface VerifiedToken {
  kind: TokenKind;
  userId: string;
  userExternalId: string;
  /** Organizations the token may act for: external id → our id. */
  orgs: Map<string, string>;
  /** The organization active without X-Service-Org (ak_ keys and sessions carrying org_id). */
  defaultOrg: string | null;
  scopes: string[];
  /**
   * The most the token may do in each organization (external id → scopes): a pat_ token, or a session
   * switching organization, is limited to what the user holds there. Absent: no limit beyond `scopes`.
   */
  orgCeilings: Map<string, string[]> | null;
  keyRowId: string | null;
  expiresAt: number;
}

export interface IdpSettings {
  jwks: Parameters<typeof jwtVerify>[1];
  issuer: string;
  audience: string;
}

/** What a wrong ak_/pat_ secret may cost (see the README's configuration table). */
export interface AttemptSettings {
  /** Per key id and client address. */
  failuresPerKey: number;
  failuresPerAddress: number;
  /** Per key id, from every address that has not proven the key. */
  unprovenFailuresPerKey: number;
  /** How long an address that verified a key's secret stays exempt from `unprovenFailuresPerKey`. */
  proofTtlSeconds: number;
  failureWindowSeconds: number;
  negativeCacheSeconds: number;
  hashConcurrency: number;
  /** How long a refused ak_/pat_ token or a limited attempt waits before it is answered. */
  failureDelayMs: number;
}

export const DEFAULT_ATTEMPT_SETTINGS: AttemptSettings = {
  failuresPerKey: 10,
  failuresPerAddress: 30,
  unprovenFailuresPerKey: 50,
  proofTtlSeconds: 7 * 86_400,
  failureWindowSeconds: 60,
  negativeCacheSeconds: 10,
  hashConcurrency: 2,
  failureDelayMs: 500,
};

/** Who presents a token; its address is what failed attempts are also counted by. */
export interface Presenter {
  address?: string;
}

/** What per-address limits and proofs count a presenter by (one bucket for callers without an address). */
const subjectOf = (presenter: Presenter) => (presenter.address ? addressSubject(presenter.address) : 'unknown');

/** Argon2id checks allowed to queue behind the running ones before new ones are refused. */
const MAX_QUEUED_HASHES = 256;
/** Tokens whose secret was proven in this process, remembered by SHA-256 (bounded, oldest first). */
const MAX_PROVEN = 10_000;

export const SERVICE_ISSUER = 'urn:voice-crm:service';
const SERVICE_AUDIENCE = 'voice-crm-api';

export function idpFromJwksUrl(url: string, issuer: string, audience: string): IdpSettings {
  return { jwks: createRemoteJWKSet(new URL(url)), issuer, audience };
}

export function idpFromPublicJwk(
  jwk: Parameters<typeof createLocalJWKSet>[0]['keys'][number],
  issuer: string,
  audience: string,
): IdpSettings {
  return { jwks: createLocalJWKSet({ keys: [jwk] }), issuer, audience };
}

function scopesFromClaims(payload: JWTPayload): string[] {
  if (Array.isArray(payload.permissions)) return payload.permissions.filter((s): s is string => typeof s === 'string');
  if (typeof payload.scope === 'string') return payload.scope.split(' ').filter(Boolean);
  return [];
}

const stringList = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.length > 0) : [];

export class TokenVerifier {
  private readonly cache: TokenCache<VerifiedToken>;
  private readonly serviceKey: Uint8Array;
  /** How many Argon2id verifications ran: the cost the cache exists to bound. */
  readonly stats = { secretVerifications: 0 };
  /** One verification in flight per token: concurrent requests with the same token share it. */
  private readonly inFlight = new Map<string, Promise<VerifiedToken>>();
  /** Recently refused tokens by hash, with the 401 detail they got. */
  private readonly refused: TokenCache<{ keyRowId: null; expiresAt: number; detail: string }>;
  /** Token hash → the secret hash it was proven against: after the cache TTL only the row is re-read. */
  private readonly proven = new Map<string, string>();
  /** Failures per key id and address, per address, and per key id from addresses that have not proven it. */
  private readonly perKeyAddress: AttemptLimiter;
  private readonly perAddress: AttemptLimiter;
  private readonly perKeyUnproven: AttemptLimiter;
  private readonly proofs: KeyProofs;
  readonly hashing: Semaphore;
  private readonly failureDelayMs: number;

  constructor(
    private readonly deps: Pick<ServiceDeps, 'sql'>,
    private readonly idp: IdpSettings,
    serviceKey: Buffer,
    cacheTtlSeconds: number,
    private readonly accessTokenTtlSeconds: number,
    attempts: AttemptSettings = DEFAULT_ATTEMPT_SETTINGS,
  ) {
    this.cache = new TokenCache(cacheTtlSeconds * 1000);
    this.refused = new TokenCache(attempts.negativeCacheSeconds * 1000);
    this.perKeyAddress = new AttemptLimiter(attempts.failuresPerKey, attempts.failureWindowSeconds * 1000);
    this.perAddress = new AttemptLimiter(attempts.failuresPerAddress, attempts.failureWindowSeconds * 1000);
    this.perKeyUnproven = new AttemptLimiter(attempts.unprovenFailuresPerKey, attempts.failureWindowSeconds * 1000);
    this.proofs = new KeyProofs(deps, attempts.proofTtlSeconds);
    this.hashing = new Semaphore(attempts.hashConcurrency, MAX_QUEUED_HASHES);
    this.failureDelayMs = attempts.failureDelayMs;
    this.serviceKey = new Uint8Array(serviceKey);
  }

  /**
   * What this process already verified of the token (the usual case), answered without a promise: a
   * request that needs no verification costs no async step for it. Undefined when `verify` must run.
   */
  cached(token: string, presenter: Presenter = {}): VerifiedToken | undefined {
    return this.fromCache(sha256(token), token, presenter);
  }

  private fromCache(hash: string, token: string, presenter: Presenter): VerifiedToken | undefined {
    const cached = this.cache.get(hash);
    // Every address a key is used from proves it, also when this process answers from its cache. In
    // the background: the proof only helps availability later, a slow or failed write must not cost this request.
    if (cached?.keyRowId && isPrefixedToken(token)) this.proofs.record(cached.keyRowId, subjectOf(presenter))?.catch(() => {});
    return cached;
  }

  async verify(token: string, presenter: Presenter = {}): Promise<VerifiedToken> {
    const hash = sha256(token);
    const cached = this.fromCache(hash, token, presenter);
    if (cached) return cached;
    try {
      const refused = this.refused.get(hash);
      if (refused) throw unauthorized(refused.detail);
      let pending = this.inFlight.get(hash);
      if (!pending) {
        pending = this.verifyUncached(token, hash, presenter).finally(() => this.inFlight.delete(hash));
        this.inFlight.set(hash, pending);
      }
      return await pending;
    } catch (error) {
      // A refused key or a limited attempt is answered late: a flood that waits for its answers (as
      // clients on a fixed number of connections do) is slowed to a trickle, costing only a timer each.
      const refusedKey = isPrefixedToken(token) && error instanceof HttpError && error.status === 401;
      if (this.failureDelayMs > 0 && (refusedKey || isDomainError(error, 'rate_limited'))) await sleep(this.failureDelayMs);
      throw error;
    }
  }

  private async verifyUncached(token: string, hash: string, presenter: Presenter): Promise<VerifiedToken> {
    try {
      const verified = isPrefixedToken(token) ? await this.verifyPrefixed(token, hash, presenter) : await this.verifyJwt(token);
      this.cache.set(hash, verified);
      return verified;
    } catch (error) {
      // A refused ak_/pat_ token is answered from memory for a while: repeating it costs nothing.
      if (error instanceof HttpError && error.status === 401 && isPrefixedToken(token)) {
        this.refused.set(hash, { keyRowId: null, expiresAt: Number.MAX_SAFE_INTEGER, detail: error.detail });
      }
      throw error;
    }
  }

  /**
   * Every unproven attempt counts before any work is done for it, and is forgiven once its secret
   * proves right: a burst of concurrent wrong secrets cannot all slip in before the first fails.
   * 429 (counting nothing) when the limiter's subject has used up its failed attempts.
   */
  private countAttempt(limits: [AttemptLimiter, string][]): () => void {
    const wait = Math.max(...limits.map(([limiter, subject]) => limiter.retryAfterSeconds(subject)));
    if (wait > 0) throw rateLimited('Too many failed attempts with API keys; retry later', wait);
    for (const [limiter, subject] of limits) limiter.fail(subject);
    return () => {
      for (const [limiter, subject] of limits) limiter.forgive(subject);
    };
  }

  /** Argon2id, bounded in concurrency; a proven token skips it as long as the stored hash is the same. */
  private async secretMatches(hash: string, secretHash: string, secret: string): Promise<boolean> {
    if (this.proven.get(hash) === secretHash) return true;
    if (this.hashing.full) throw rateLimited('Too many API key verifications in progress; retry shortly', 1);
    this.stats.secretVerifications++;
    const ok = await this.hashing.run(() => verifySecret(secretHash, secret));
    if (ok) {
      this.proven.delete(hash);
      if (this.proven.size >= MAX_PROVEN) this.proven.delete(this.proven.keys().next().value!);
      this.proven.set(hash, secretHash);
    }
    return ok;
  }

  /** Drops cached results of a key revoked by this process (others notice within the cache TTL). */
  forget(keyRowId: string): void {
    this.cache.evictKey(keyRowId);
  }

  /** The explicit exchange: a short-lived service JWT carrying the same organization(s) and scopes. */
  async exchange(token: string, presenter: Presenter = {}): Promise<{ access_token: string; token_type: 'bearer'; expires_in: number }> {
    if (!isPrefixedToken(token)) throw unauthorized('Invalid API key');
    const verified = await this.verify(token, presenter);
    const expiresAt = Math.min(verified.expiresAt, Date.now() + this.accessTokenTtlSeconds * 1000);
    const expiresIn = Math.max(1, Math.floor((expiresAt - Date.now()) / 1000));
    const accessToken = await new SignJWT({
      kind: verified.kind,
      org_ids: [...verified.orgs.keys()],
      org_id: verified.defaultOrg,
      permissions: verified.scopes,
      key: verified.keyRowId,
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(verified.userExternalId)
      .setIssuer(SERVICE_ISSUER)
      .setAudience(SERVICE_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt / 1000))
      .sign(this.serviceKey);
    return { access_token: accessToken, token_type: 'bearer', expires_in: expiresIn };
  }

  private async verifyPrefixed(token: string, hash: string, presenter: Presenter): Promise<VerifiedToken> {
    const parsed = parseToken(token);
    if (!parsed) throw unauthorized('Invalid API key');
    const address = subjectOf(presenter);
    // A token proven in this process is never limited. Others count per address and per key id from
    // that address, so a flood from one place cannot lock the key's holder out elsewhere.
    const provenHere = this.proven.has(hash);
    const forgive = provenHere
      ? []
      : [
          this.countAttempt([
            [this.perAddress, address],
            [this.perKeyAddress, `${parsed.keyId}|${address}`],
          ]),
        ];
    // While the key id's budget for strangers is spent, a flood is refused from memory, not per row read.
    const spent = !provenHere && this.perKeyUnproven.retryAfterSeconds(parsed.keyId) > 0;
    if (spent && !(await this.proofs.possiblyProven(parsed.kind, parsed.keyId, address))) {
      const wait = this.perKeyUnproven.retryAfterSeconds(parsed.keyId);
      if (wait > 0) throw rateLimited('Too many failed attempts with API keys; retry later', wait);
    }
    const row = await identity.findKey(this.deps, parsed.kind, parsed.keyId, address);
    if (!row) throw unauthorized('Invalid API key');
    // The key id's budget for addresses that never proved it bounds the Argon2id a flood from many
    // addresses costs; an address that proved the key (in any API process) is not held to it.
    if (!provenHere && !row.address_proven) forgive.push(this.countAttempt([[this.perKeyUnproven, parsed.keyId]]));
    if (!(await this.secretMatches(hash, row.secret_hash, parsed.secret))) throw unauthorized('Invalid API key');
    for (const undo of forgive) undo();
    if (row.revoked_at) throw unauthorized('API key revoked');
    if (row.expires_at && row.expires_at.getTime() <= Date.now()) throw unauthorized('API key expired');
    await Promise.all([identity.keyUsed(this.deps, row.id), this.proofs.record(row.id, address)]);
    const common = { userId: row.user_id, userExternalId: row.user_external_id, scopes: row.scopes, keyRowId: row.id };
    const expiresAt = row.expires_at?.getTime() ?? Number.MAX_SAFE_INTEGER;
    if (row.kind === 'organization') {
      const orgs = new Map([[row.org_external_id!, row.org_id!]]);
      return { ...common, kind: 'organization_key', orgs, defaultOrg: row.org_external_id, orgCeilings: null, expiresAt };
    }
    return { ...common, kind: 'user_token', ...(await this.membershipView(row.user_id)), defaultOrg: null, expiresAt };
  }

  /** A user's organizations and, for each, the scopes its last session there carried (none if never). */
  private async membershipView(userId: string, only?: Set<string>) {
    const memberships = (await identity.membershipsOf(this.deps, userId)).filter((m) => !only || only.has(m.external_id));
    return {
      orgs: new Map(memberships.map((m) => [m.external_id, m.id])),
      orgCeilings: new Map(memberships.map((m) => [m.external_id, m.scopes ?? []])),
    };
  }

  private async verifyJwt(token: string): Promise<VerifiedToken> {
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw unauthorized('Invalid token');
    }
    const service = header.alg === 'HS256';
    let payload: JWTPayload;
    try {
      ({ payload } = service
        ? await jwtVerify(token, this.serviceKey, { issuer: SERVICE_ISSUER, audience: SERVICE_AUDIENCE, algorithms: ['HS256'] })
        : await jwtVerify(token, this.idp.jwks as never, { issuer: this.idp.issuer, audience: this.idp.audience }));
    } catch (error) {
      throw unauthorized(error instanceof errors.JWTExpired ? 'Token expired' : 'Invalid token');
    }
    if (typeof payload.sub !== 'string' || !payload.sub) throw unauthorized('Invalid token');
    const defaultOrg = typeof payload.org_id === 'string' && payload.org_id ? payload.org_id : null;
    const orgExternalIds = [...new Set([...(defaultOrg ? [defaultOrg] : []), ...stringList(payload.org_ids)])];
    const expiresAt = (payload.exp ?? 0) * 1000;

    if (service) {
      // An exchanged ak_/pat_ token stops working with its key, like the key itself.
      const keyRowId = typeof payload.key === 'string' ? payload.key : null;
      if (keyRowId) {
        const status = await identity.keyStatus(this.deps, keyRowId);
        if (!status || status.revoked_at) throw unauthorized('API key revoked');
      }
      const userId = await identity.userOf(this.deps, payload.sub);
      const scopes = scopesFromClaims(payload);
      if (payload.kind === 'organization_key') {
        const org = defaultOrg ? await identity.organizationByExternalId(this.deps, defaultOrg) : undefined;
        if (!org) throw unauthorized('Invalid token');
        const orgs = new Map([[defaultOrg!, org.id]]);
        return {
          kind: 'organization_key',
          userId,
          userExternalId: payload.sub,
          orgs,
          defaultOrg,
          scopes,
          orgCeilings: null,
          keyRowId,
          expiresAt,
        };
      }
      // Memberships as they are now, within those the token was issued for.
      const view = await this.membershipView(userId, new Set(orgExternalIds));
      return { kind: 'user_token', userId, userExternalId: payload.sub, ...view, defaultOrg: null, scopes, keyRowId, expiresAt };
    }

    // A session: the organization and user are created on first sight, memberships follow the claims.
    const scopes = scopesFromClaims(payload);
    const { userId, orgs } = await identity.signInSession(this.deps, {
      subject: payload.sub,
      email: payload.email,
      orgExternalIds,
      activeOrg: defaultOrg,
      scopes,
      complete: Array.isArray(payload.org_ids),
    });
    // In its own organization a session has its scopes; switched to another, what the user holds there.
    const orgCeilings = new Map((await this.membershipView(userId, new Set(orgExternalIds))).orgCeilings);
    if (defaultOrg) orgCeilings.set(defaultOrg, scopes);
    return { kind: 'session', userId, userExternalId: payload.sub, orgs, defaultOrg, scopes, orgCeilings, keyRowId: null, expiresAt };
  }
}
