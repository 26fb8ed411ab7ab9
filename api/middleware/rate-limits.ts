import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type Koa from 'koa';
import { type PolicyState, type RatePolicy, exceededDetail, policyField, stateField } from '../../domain/rate-limits';
import { SharedRateLimiter, type Taken } from '../../services/rate-limits';
import type { RequestAuth } from '../auth/context';
import type { AppDeps } from '../deps';
import { HttpError } from '../errors';
import type { ResponseSpec, RouteGuard } from '../route';

// Every authenticated request counts against two quotas: its credential's ("key": the ak_ or pat_ key, or
// the session's user) and its organization's ("org"), the first below the second, so one busy credential
// leaves the rest of the organization's quota to the others. Each answer says so in the IETF draft's
// fields; a spent quota is 429 with Retry-After. Public routes (health, docs, tracking, share links) are
// not counted here: those that need it have limits of their own, per address or link.

/** The credential a request counts against, and scopes its idempotency keys: one key, or one session user. */
export const principalOf = (auth: Pick<RequestAuth, 'keyId' | 'userId'>): string =>
  auth.keyId ? `key:${auth.keyId}` : `user:${auth.userId}`;

const HEADERS = {
  'RateLimit-Policy': {
    description:
      'The quotas this request counts against (IETF draft-ietf-httpapi-ratelimit-headers): "key" for the credential ' +
      '(an ak_ or pat_ key, or the session\'s user) and "org" for the organization, each with its quota `q` of ' +
      'requests per window `w` in seconds, e.g. `"key";q=1200;w=60, "org";q=3000;w=60`',
    schema: { type: 'string' as const },
  },
  RateLimit: {
    description:
      'What is left of each quota: `r` requests in the current window, which ends in `t` seconds, e.g. ' +
      '`"key";r=1187;t=42, "org";r=2950;t=42`',
    schema: { type: 'string' as const },
  },
};
const REFS = {
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
  RateLimit: { $ref: '#/components/headers/RateLimit' },
};

export function createRateLimitGuard(deps: Pick<AppDeps, 'config' | 'sql' | 'logger'>, registry: OpenAPIRegistry): RouteGuard {
  const { config } = deps;
  const window = config.RATE_LIMIT_WINDOW_SECONDS;
  const key: RatePolicy | null =
    config.RATE_LIMIT_KEY_REQUESTS > 0 ? { name: 'key', quota: config.RATE_LIMIT_KEY_REQUESTS, windowSeconds: window } : null;
  const org: RatePolicy | null =
    config.RATE_LIMIT_ORG_REQUESTS > 0 ? { name: 'org', quota: config.RATE_LIMIT_ORG_REQUESTS, windowSeconds: window } : null;
  if (!key && !org) return { forRoute: () => undefined };
  for (const [name, header] of Object.entries(HEADERS)) registry.registerComponent('headers', name, header);

  const limiter = new SharedRateLimiter(deps, config.RATE_LIMIT_LEASE_MAX);
  // The policy field depends only on whether the request has an organization: written once.
  const withOrg = policyField([key, org].filter((p) => p !== null));
  const withoutOrg = key ? policyField([key]) : '';

  const refuse = (states: PolicyState[], spent: PolicyState, policies: string): never => {
    throw new HttpError(429, exceededDetail(spent), {
      'Retry-After': String(spent.resetSeconds),
      'RateLimit-Policy': policies,
      RateLimit: stateField(states),
    });
  };

  // Plain functions rather than closures made per request: a request served from a lease allocates little.
  const decideOrg = (ctx: Koa.Context, principal: string, byKey: Taken | null, byOrg: Taken): void => {
    if (!byOrg.allowed) {
      // The credential's request was not served: it goes back to its quota, and the answer says so.
      if (byKey) limiter.giveBack(principal, key!);
      refuse(byKey ? [limiter.peek(principal, key!), byOrg.state] : [byOrg.state], byOrg.state, withOrg);
    }
    ctx.set('RateLimit-Policy', withOrg);
    ctx.set('RateLimit', stateField(byKey ? [byKey.state, byOrg.state] : [byOrg.state]));
  };

  /** The organization's quota, once the credential's allowed the request (or there is none). */
  const takeOrg = (ctx: Koa.Context, auth: RequestAuth, principal: string, byKey: Taken | null): void | Promise<void> => {
    const byOrg = limiter.take(`org:${auth.orgId}`, org!);
    return byOrg instanceof Promise
      ? byOrg.then((taken) => decideOrg(ctx, principal, byKey, taken))
      : decideOrg(ctx, principal, byKey, byOrg);
  };

  const afterKey = (ctx: Koa.Context, auth: RequestAuth, principal: string, byKey: Taken): void | Promise<void> => {
    const hasOrg = org !== null && auth.orgId !== null;
    if (!byKey.allowed) {
      const states = hasOrg ? [byKey.state, limiter.peek(`org:${auth.orgId}`, org)] : [byKey.state];
      refuse(states, byKey.state, hasOrg ? withOrg : withoutOrg);
    }
    if (hasOrg) return takeOrg(ctx, auth, principal, byKey);
    ctx.set('RateLimit-Policy', withoutOrg);
    ctx.set('RateLimit', stateField([byKey.state]));
  };

  const admit = (ctx: Koa.Context, auth: RequestAuth): void | Promise<void> => {
    const principal = principalOf(auth);
    if (!key) return auth.orgId !== null ? takeOrg(ctx, auth, principal, null) : undefined;
    const byKey = limiter.take(principal, key);
    return byKey instanceof Promise ? byKey.then((taken) => afterKey(ctx, auth, principal, taken)) : afterKey(ctx, auth, principal, byKey);
  };

  const document = (responses: Record<number, ResponseSpec>): Record<number, ResponseSpec> =>
    Object.fromEntries(
      Object.entries(responses).map(([status, response]) => {
        // A 401 is answered before the caller is known, so before anything is counted.
        if (status === '401') return [status, response];
        const documented: ResponseSpec = { ...response, headers: { ...response.headers, ...REFS } };
        if (status === '429')
          documented.description = `${response.description}; or the credential's or the organization's request quota is spent (RateLimit-Policy, RateLimit)`;
        return [status, documented];
      }),
    );

  return { forRoute: (route) => (route.auth === 'public' ? undefined : { admit, document }) };
}
