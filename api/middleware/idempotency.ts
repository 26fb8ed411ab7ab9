import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type Koa from 'koa';
import { z } from 'zod';
import { type Answer, IdempotencyKeys, type KeyScope, fingerprintOf } from '../../services/idempotency';
import type { RequestAuth } from '../auth/context';
import type { AppDeps } from '../deps';
import { HttpError, ValidationError } from '../errors';
import type { GuardedRoute, Reply, ResponseSpec, RouteGuard } from '../route';
import { ErrorBody, ValidationErrorBody } from '../schemas/common';
import { answerError } from './errors';
import { principalOf } from './rate-limits';

// Idempotency-Key on the POSTs that create or start something: the same key with the same request
// (method, path with its query, body bytes) within IDEMPOTENCY_KEY_TTL_SECONDS answers the first answer
// again, marked `Idempotent-Replayed: true`, and runs nothing; with another request it is 422; while the
// first still runs, 409. Keys belong to an organization and a credential. Answers of 500 and up are not
// kept: the service's 5xx say nothing was done, so the client may send the key again.

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
const MAX_KEY_LENGTH = 255;
const KEY_PATTERN = /^[\x20-\x7E]+$/;

/**
 * Authenticated POSTs that do not take a key, and why; every other authenticated POST of an organization
 * whose answer is JSON takes one. Routes without an organization (feedback, a user's own tokens) and
 * routes answering a stream (the AI chat's turns, the Analytics Assistant's questions) take none either.
 */
export const WITHOUT_IDEMPOTENCY_KEY: Record<string, string> = {
  '/core/agents/{id}/knowledge-base/query': 'a read sent as POST: sending it again changes nothing',
  '/knowledge-base/datasets/{dataset_id}/query': 'a read sent as POST: sending it again changes nothing',
  '/core/agents/{id}/versions/compare': 'a read sent as POST: sending it again changes nothing',
  '/analytics-assistant/query': 'a read-only SELECT: sending it again changes nothing',
  '/cards/{card_id}/media':
    'raw image bytes streamed to storage as they arrive: a fingerprint would need the whole image held first; an upload sent again stores a second image under a new key, which nothing names until the card is given it',
};

const isJson = (r: ResponseSpec | undefined) => !r?.contentType || [r.contentType].flat().includes('application/json');

/** Whether a route takes an Idempotency-Key: true, or the reason it does not. */
export function idempotencyOf(route: Pick<GuardedRoute, 'method' | 'path' | 'auth' | 'responses' | 'documented'>): true | string {
  if (route.method !== 'post') return 'not a POST';
  if (route.auth === 'public') return 'public: keys belong to an organization and a credential';
  if (route.auth.org === 'optional') return 'no organization required: keys belong to an organization';
  const reason = WITHOUT_IDEMPOTENCY_KEY[route.path];
  if (reason) return reason;
  if (route.documented?.body) return 'reads its own body, which is not read before the handler runs';
  if (!isJson(route.responses[200] ?? route.responses[202])) return 'answers a stream, which cannot be kept and replayed';
  return true;
}

const keyIssue = (type: string, msg: string, input: string, ctx: Record<string, unknown> = {}) =>
  new ValidationError([{ type, loc: ['header', IDEMPOTENCY_KEY_HEADER.toLowerCase()], msg, input: input.slice(0, 300), ctx }]);

/** The key as sent: 1 to 255 printable ASCII characters (a structured-field string's quotes are part of it). */
function parseKey(value: string): string {
  if (value.length > MAX_KEY_LENGTH)
    throw keyIssue('string_too_long', `String should have at most ${MAX_KEY_LENGTH} characters`, value, { max_length: MAX_KEY_LENGTH });
  if (!KEY_PATTERN.test(value))
    throw keyIssue('string_pattern_mismatch', `String should match pattern '${KEY_PATTERN.source}'`, value, {
      pattern: KEY_PATTERN.source,
    });
  return value;
}

/** A body as the answer carries it; undefined for what cannot be kept (a stream, bytes). */
function bodyText(body: unknown): string | undefined {
  if (body === null || body === undefined) return '';
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body) || typeof (body as { pipe?: unknown }).pipe === 'function') return undefined;
  return JSON.stringify(body);
}

/** What the request answered, to keep; undefined for what is not kept (a 5xx, a stream, bytes). */
function answerOf(ctx: Koa.Context, before: Set<string>): Answer | undefined {
  const text = bodyText(ctx.body);
  if (ctx.status >= 500 || text === undefined) return undefined;
  // The headers the route set (its own, Content-Type), not those of this request (request id, rate limits).
  const headers: Answer['headers'] = {};
  for (const [name, value] of Object.entries(ctx.response.headers)) {
    if (before.has(name) || name === 'content-length' || value === undefined) continue;
    headers[name] = Array.isArray(value) ? value : String(value);
  }
  return { status: ctx.status, headers, body: text };
}

/**
 * What the handler answered after its request had been answered already (its deadline passed: 503), from
 * the handler's own reply, since the response can no longer take it: the retry gets what was done.
 */
function lateAnswerOf(r: Reply): Answer | undefined {
  const text = bodyText(r.body);
  if (r.status >= 500 || text === undefined) return undefined;
  const headers: Answer['headers'] = Object.fromEntries(Object.entries(r.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  if (text !== '')
    headers['content-type'] =
      r.contentType ?? (typeof r.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8');
  return { status: r.status, headers, body: text };
}

function replay(ctx: Koa.Context, answer: Answer): void {
  ctx.status = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  ctx.set('Idempotent-Replayed', 'true');
  if (answer.body !== '') ctx.body = answer.body; // its Content-Type is among the kept headers
}

export function createIdempotencyGuard(deps: Pick<AppDeps, 'config' | 'sql' | 'logger'>, registry: OpenAPIRegistry): RouteGuard {
  const keys = new IdempotencyKeys(deps);
  const hours = deps.config.IDEMPOTENCY_KEY_TTL_SECONDS / 3600;
  const within = `within ${Number.isInteger(hours) ? `${hours} hours` : `${deps.config.IDEMPOTENCY_KEY_TTL_SECONDS} seconds`}`;
  const parameter = registry.registerParameter(
    'IdempotencyKey',
    z
      .string()
      .min(1)
      .max(MAX_KEY_LENGTH)
      .regex(KEY_PATTERN)
      .optional()
      .openapi({
        param: {
          name: IDEMPOTENCY_KEY_HEADER,
          in: 'header',
          description:
            `A key of the client's choosing (a UUID, say), 1 to ${MAX_KEY_LENGTH} printable ASCII characters: the same request ` +
            `(method, path, query and body) sent again with it ${within} gets the first answer again, with ` +
            '`Idempotent-Replayed: true`, and nothing is done twice. The key belongs to the organization and the credential ' +
            "(an ak_ or pat_ key, or the session's user). A 5xx answer is not kept: the request may be sent again under the same key.",
        },
      }),
  );
  registry.registerComponent('headers', 'Idempotent-Replayed', {
    description: "`true` when this is the answer kept for the request's Idempotency-Key, sent again",
    schema: { type: 'string', enum: ['true'] },
  });

  const document = (responses: Record<number, ResponseSpec>): Record<number, ResponseSpec> => {
    const documented: Record<number, ResponseSpec> = {};
    for (const [code, response] of Object.entries(responses)) {
      const status = Number(code);
      // Every answer the handler gives is kept and may come back as a replay (the wrapper's own refusals come first).
      documented[status] =
        status < 500 && status !== 401 && status !== 429
          ? { ...response, headers: { ...response.headers, 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } } }
          : response;
    }
    const running = 'a request with the same Idempotency-Key is still being processed';
    documented[409] = responses[409]
      ? { ...documented[409]!, description: `${responses[409].description}; or ${running}` }
      : { description: running[0]!.toUpperCase() + running.slice(1), schema: ErrorBody };
    const invalidKey = `the Idempotency-Key is not 1 to ${MAX_KEY_LENGTH} printable ASCII characters, or was used ${within} with another request (method, path, query or body)`;
    documented[422] = responses[422]
      ? { ...documented[422]!, description: `${responses[422].description}; or ${invalidKey}` }
      : { description: `Validation failed: ${invalidKey}`, schema: ValidationErrorBody };
    return documented;
  };

  const around = async (ctx: Koa.Context, auth: RequestAuth, respond: () => Promise<Reply>): Promise<void> => {
    const sent = ctx.headers['idempotency-key'];
    if (sent === undefined) {
      await respond();
      return;
    }
    const key = parseKey(Array.isArray(sent) ? sent.join(', ') : sent);
    const scope: KeyScope = { orgId: auth.orgId!, principal: principalOf(auth), key };
    const raw = (ctx.request as { rawBody?: string }).rawBody ?? '';
    const claimed = await keys.claim(scope, { method: ctx.method, path: ctx.path, fingerprint: fingerprintOf(ctx.method, ctx.url, raw) });
    if (claimed.kind === 'mismatch')
      throw keyIssue(
        'idempotency_key_reused',
        `This Idempotency-Key was used ${within} with another request (method, path, query or body)`,
        key,
      );
    if (claimed.kind === 'running')
      throw new HttpError(409, 'A request with this Idempotency-Key is still being processed; retry once it has finished');
    if (claimed.kind === 'replay') return replay(ctx, claimed.answer);

    const before = new Set(Object.keys(ctx.response.headers));
    let answer: Answer | undefined;
    try {
      const r = await respond();
      answer = ctx.headerSent ? lateAnswerOf(r) : answerOf(ctx, before);
    } catch (error) {
      // The error becomes its answer here, as the error handler would make it further out, so it can be kept
      // (unless the request was answered already: a failure after the deadline frees the key).
      answerError(ctx, error);
      answer = ctx.headerSent ? undefined : answerOf(ctx, before);
    }
    try {
      if (answer) await keys.complete(scope, claimed.claim, answer);
      else await keys.release(scope, claimed.claim);
    } catch (err) {
      // The answer stands; the key stays claimed until its lock lapses, then a retry runs the request again.
      ctx.state.log.warn({ err }, 'idempotency key not recorded');
    }
  };

  return {
    forRoute: (route) =>
      idempotencyOf(route) === true ? { headers: { [IDEMPOTENCY_KEY_HEADER]: parameter }, document, around } : undefined,
  };
}
