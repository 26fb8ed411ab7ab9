import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { HttpError, badRequest, fromZodError, type Location } from './errors';
import { ErrorBody, ValidationErrorBody, tooManyAttempts } from './schemas/common';
import { checkParameterText } from './middleware/request-text';

const BODY_FAILURES: Record<number, string> = {
  400: 'Body is not valid UTF-8 (or holds a lone UTF-16 surrogate escape), or nested deeper than JSON_MAX_DEPTH',
  413: 'Body larger than BODY_LIMIT_BYTES',
  415: 'Body of a media type other than JSON, or in a charset other than UTF-8',
};
import type { Tag } from './openapi-registry';
import type { AuthRule, Authenticator, RequestAuth } from './auth/context';
import { enforce } from './auth/guards';
import { MAX_REQUEST_HEADER_BYTES } from './request-limits';
import { indexRoutes } from './route-index';
import { andThen } from './maybe-promise';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Schema = z.ZodType;
type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface Reply<S extends number = number, B = unknown> {
  readonly __reply: true;
  readonly status: S;
  readonly body?: B;
  readonly headers?: Record<string, string>;
  readonly contentType?: string;
}

/** A handler result with a status or headers other than 200 JSON; its body is checked against the status's schema. */
export function reply<S extends number>(status: S): Reply<S, undefined>;
export function reply<S extends number, B>(status: S, body: B, headers?: Record<string, string>, contentType?: string): Reply<S, B>;
export function reply(status: number, body?: unknown, headers?: Record<string, string>, contentType?: string): Reply {
  return { __reply: true, status, body, headers, contentType };
}

export interface ResponseSpec {
  description: string;
  schema?: Schema;
  /** The response's media type (default JSON); several when a parameter chooses among them. */
  contentType?: string | string[];
  headers?: Record<string, { description: string; schema: { type: 'string' | 'integer' } } | { $ref: string }>;
  /** Documentation only: the JSON body the wrapper answers with the same status (see Routes.add). */
  json?: Schema;
}

type Responses = Record<number, ResponseSpec>;
/** What a status's schema accepts (its input side: what a handler may hand over to be serialized). */
type BodyOf<E> = E extends { contentType: 'application/json' }
  ? JsonBodyOf<E>
  : E extends { contentType: unknown }
    ? unknown // text, images, streams: the wrapper passes them through unchecked
    : JsonBodyOf<E>;
type JsonBodyOf<E> = E extends { schema: infer S extends z.ZodType } ? z.input<S> : E extends { schema: unknown } ? unknown : undefined;
/**
 * What a handler may return, derived from the responses it declares: a `reply(status, body)` of a
 * declared status with a body its schema accepts, or, when 200 is declared, the 200 body itself.
 * A handler returning anything else does not compile.
 */
export type HandlerResult<R extends Responses> =
  | { [K in keyof R & number]: Reply<K, BodyOf<R[K]>> }[keyof R & number]
  // a status chosen at run time among declared ones (`reply(ok ? 200 : 503, body)`)
  | Reply<keyof R & number, { [K in keyof R & number]: BodyOf<R[K]> }[keyof R & number]>
  | (200 extends keyof R ? (R[200] extends { schema: z.ZodType } ? BodyOf<R[200]> : unknown) : never);

export interface RouteSpec<
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
  A extends AuthRule | 'public',
  R extends Responses = Responses,
> {
  method: Method;
  /** OpenAPI form, e.g. /contacts/{contact_id}. */
  path: string;
  tag: Tag;
  summary: string;
  /** The operation's longer description in the document (what it does beyond its summary). */
  description?: string;
  auth: A;
  params?: P;
  query?: Q;
  body?: B;
  /** Request headers to validate (names in lower case); the handler reads them from ctx. */
  headers?: z.ZodObject;
  /**
   * Documented in OpenAPI but left to the handler to read, after what must come first (a signed
   * webhook verifies its raw bytes before anything is parsed).
   */
  documented?: {
    body?: Schema;
    headers?: z.ZodObject /** Media types of the documented body (default JSON). */;
    bodyContentTypes?: string[];
  };
  /** A JSON body limit of the route's own, below the app's (unauthenticated routes take small bodies). */
  bodyLimitBytes?: number;
  /**
   * Checks a route without a bearer token makes before its body is read (a signed callback's signature
   * header): a caller that fails them never has its body read.
   */
  beforeBody?: (ctx: Koa.Context) => void | Promise<void>;
  /**
   * The statuses the route itself answers. The wrapper adds the standard ones it derives: 401 and 403
   * from an auth rule, 400 (unknown query parameter, missing organization), and 422 from declared inputs.
   */
  responses: R;
  handler: (input: {
    params: Infer<P>;
    query: Infer<Q>;
    body: Infer<B>;
    auth: A extends 'public' ? undefined : RequestAuth;
    ctx: Koa.Context;
  }) => HandlerResult<R> | Promise<HandlerResult<R>>;
}

/** The standard answers of a route, from what it declares; a route's own description of a status wins. */
export function standardResponses(spec: {
  auth: AuthRule | 'public';
  params?: unknown;
  query?: unknown;
  body?: unknown;
  headers?: unknown;
  bodyLimitBytes?: number;
}): Responses {
  const standard: Responses = {
    400: {
      description: 'Unknown query parameter, invalid filter value, query string not valid UTF-8, or no active organization',
      schema: ErrorBody,
    },
  };
  if (spec.auth !== 'public') {
    standard[401] = { description: 'Missing, malformed, expired or revoked token', schema: ErrorBody };
    standard[403] = { description: 'Token lacks the scope, or organization not permitted', schema: ErrorBody };
    // Any bearer token may be an ak_/pat_ key whose failed attempts are limited.
    standard[429] = tooManyAttempts[429];
  }
  // The JSON body reader (api/middleware/json-body.ts) answers these for every route that takes a body.
  if (spec.body) {
    for (const [status, description] of Object.entries(BODY_FAILURES)) {
      if (Number(status) === 400) standard[400] = { description: `${standard[400]!.description}; ${description}`, schema: ErrorBody };
      else if (Number(status) === 413 && spec.bodyLimitBytes !== undefined)
        standard[413] = { description: `Body larger than ${spec.bodyLimitBytes} bytes`, schema: ErrorBody };
      else standard[Number(status)] = { description, schema: ErrorBody };
    }
  }
  if (spec.params || spec.query || spec.body || spec.headers)
    standard[422] = { description: 'Validation failed', schema: ValidationErrorBody };
  // Node refuses a request line and headers past the limit before any route runs (api/request-limits.ts); the
  // document's own queries stay below it (test/unit/request-size.test.ts), longer ones reach it.
  if (spec.query)
    standard[431] = {
      description: `Request line and headers larger than ${MAX_REQUEST_HEADER_BYTES / 1024} KiB (the URL with its query counts)`,
    };
  return standard;
}

function parse<S extends Schema | undefined>(schema: S, input: unknown, location: Location): Infer<S> {
  if (!schema) return undefined as Infer<S>;
  const result = schema.safeParse(input);
  if (!result.success) throw fromZodError(result.error, location, input, schema);
  return result.data as Infer<S>;
}

/**
 * A query parameter the route does not declare is refused with 400 `Unknown filter: x`, on every
 * route, rather than silently ignored (a mistyped filter would return everything).
 */
function assertKnownQuery(query: Record<string, unknown>, schema: Schema | undefined): void {
  if (!schema) {
    const unknown = Object.keys(query);
    if (unknown.length > 0) throw badRequest(`Unknown filter: ${unknown.join(', ')}`);
    return;
  }
  // A loose object (z.looseObject) declares that other parameters are ignored: public pages whose links
  // get tracking parameters (fbclid, gclid) appended by the sites they are shared on.
  if ((schema as z.ZodObject).def?.catchall?._zod.def.type === 'unknown') return;
  const shape = (schema as z.ZodObject).shape ?? {};
  const unknown = Object.keys(query).filter((key) => !(key in shape));
  if (unknown.length > 0) throw badRequest(`Unknown filter: ${unknown.join(', ')}`);
}

/**
 * A filter outside its allowed values is the API's 400 "invalid enum value", checked here for every
 * list; any other query failure (a malformed number, a bound) stays a 422.
 */
function parseQuery<S extends Schema | undefined>(schema: S, input: Record<string, unknown>): Infer<S> {
  if (!schema) return undefined as Infer<S>;
  const result = schema.safeParse(input);
  if (result.success) return result.data as Infer<S>;
  const [issue] = result.error.issues;
  if (result.error.issues.length === 1 && issue!.code === 'invalid_value') {
    const name = String(issue!.path[0]);
    throw badRequest(`Invalid ${name} '${String(input[name])}': expected one of ${issue!.values.map(String).join(', ')}`);
  }
  throw fromZodError(result.error, 'query', input);
}

const NO_QUERY: Record<string, string | string[] | undefined> = Object.freeze({});

/** Query strings arrive as string | string[]; single values are unwrapped so schemas see scalars. */
function plainQuery(query: Record<string, string | string[] | undefined>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) && v.length === 1 ? v[0] : v]));
}

/**
 * The one place a route is declared: it is registered in Koa and in the OpenAPI registry from the
 * same zod schemas, its auth rule is enforced, and its params, query and body are parsed before the
 * handler runs, so handlers never touch raw input.
 */
export interface RoutesOptions {
  /**
   * Check every JSON answer against the schema declared for its status (tests turn it on): an answer
   * that does not match becomes a 500 naming the route and the mismatch, so the test that made it fails.
   */
  checkResponses?: boolean;
  /** What runs around the routes beside their own declarations (rate limits, idempotency keys). */
  guards?: RouteGuard[];
}

/** What a route guard sees of a route when it is declared. */
export interface GuardedRoute {
  method: Method;
  path: string;
  auth: AuthRule | 'public';
  /** Every status the route declares, the wrapper's standard ones included. */
  responses: Responses;
  /** A body the handler reads itself (raw bytes, a form), documented only. */
  documented?: { body?: Schema };
}

/** What a guard does for one route, decided once when the route is declared; what it leaves out costs nothing. */
export interface RouteGuardPlan {
  /** The route's documented statuses with the guard's own (statuses it answers, headers it sets). */
  document?(responses: Responses): Responses;
  /** Request headers the guard reads, for the document (a registered parameter is one shared definition). */
  headers?: Record<string, z.ZodType>;
  /** Once the caller is authenticated, before its auth rule is applied and before the body is read. */
  admit?(ctx: Koa.Context, auth: RequestAuth): void | Promise<void>;
  /** Around the handler once the inputs are parsed: `respond` runs it, writes its answer into ctx and returns it. */
  around?(ctx: Koa.Context, auth: RequestAuth, respond: () => Promise<Reply>): Promise<void>;
}

export interface RouteGuard {
  forRoute(route: GuardedRoute): RouteGuardPlan | undefined;
}

/**
 * Reads a route's JSON body into `ctx.request.body`, within the route's own limit if it has one (see
 * api/middleware/json-body.ts). Called only once the caller passed the route's auth rule.
 */
export type BodyReader = (ctx: Koa.Context, ownLimitBytes?: number) => Promise<void>;

/** Serves one route: at once when nothing it does waits, else a promise. */
export type RouteServer = (ctx: Koa.Context) => void | Promise<void>;

/** A read body (`ctx.request.body`, none: `{}`) as the route's schema parses it. */
const parsedBody = (schema: Schema, ctx: Koa.Context): unknown => parse(schema, (ctx.request as { body?: unknown }).body ?? {}, 'body');

export class Routes {
  readonly router = new Router();
  readonly declared: { method: Method; path: string; auth: AuthRule | 'public'; statuses: number[] }[] = [];
  /** The functions serving the routes added here: each is a whole route, which never hands on to a next one. */
  readonly served = new WeakSet<RouteServer>();

  constructor(
    private readonly registry: OpenAPIRegistry,
    private readonly authenticator: Authenticator,
    private readonly readBody: BodyReader,
    private readonly options: RoutesOptions = {},
  ) {
    indexRoutes(this.router);
  }

  add<
    P extends Schema | undefined,
    Q extends Schema | undefined,
    B extends Schema | undefined,
    A extends AuthRule | 'public',
    R extends Responses,
  >(spec: RouteSpec<P, Q, B, A, R>): void {
    const standard = standardResponses(spec);
    let responses: Responses = { ...standard, ...spec.responses };
    const plans = (this.options.guards ?? []).flatMap((guard) => guard.forRoute({ ...spec, responses }) ?? []);
    for (const plan of plans) if (plan.document) responses = plan.document(responses);
    const admit = plans.find((plan) => plan.admit)?.admit;
    const around = plans.find((plan) => plan.around)?.around;
    const guardHeaders = Object.assign({}, ...plans.map((plan) => plan.headers ?? {})) as Record<string, z.ZodType>;
    this.declared.push({ method: spec.method, path: spec.path, auth: spec.auth, statuses: Object.keys(responses).map(Number) });
    // A route may restate a standard status as a page (400 text/html), but the wrapper still answers its
    // own cases of that status (an unknown query parameter) in JSON: the document lists both.
    const documented: Responses = { ...responses };
    for (const [status, own] of Object.entries(spec.responses)) {
      const wrapper = standard[Number(status)];
      if (wrapper?.schema && own.schema && !isJson(own)) {
        documented[Number(status)] = { ...own, description: `${own.description}; in JSON: ${wrapper.description}`, json: wrapper.schema };
      }
    }
    this.registry.registerPath(this.openApiConfig(spec, documented, guardHeaders));
    const koaPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
    const serve: RouteServer = (ctx) => {
      // Who calls, and whether they may, is settled before the body is read: an unauthenticated or
      // refused caller costs no body read or parse, however large a body it declares.
      if (spec.auth === 'public') return this.serveAuthorized(spec, responses, ctx, undefined, undefined);
      return andThen(this.authenticator.authenticate(ctx), (auth) =>
        andThen(admit?.(ctx, auth), () => {
          enforce(spec.auth, auth);
          return this.serveAuthorized(spec, responses, ctx, auth, around);
        }),
      );
    };
    this.served.add(serve);
    this.router[spec.method](koaPath, serve);
  }

  /**
   * Parses a route's inputs and answers it. Each step that may wait is waited for only when it does (a
   * cached caller, a quota served from a lease, a route without a body answer at once), so a route whose
   * steps all answer at once is served without a promise: on Node 20 the request scope's async hooks tax
   * each one (docs/performance.md, GET /me).
   */
  private serveAuthorized<I extends { ctx: Koa.Context }>(
    spec: Omit<RouteSpec<Schema | undefined, Schema | undefined, Schema | undefined, AuthRule | 'public', Responses>, 'handler'> & {
      handler: (input: I) => unknown;
    },
    responses: Responses,
    ctx: Koa.Context,
    auth: RequestAuth | undefined,
    around: RouteGuardPlan['around'],
  ): void | Promise<void> {
    return andThen(spec.beforeBody?.(ctx), () => {
      if (spec.headers) parse(spec.headers, ctx.headers, 'header');
      // Without a query string there is nothing to parse (ctx.query would parse the empty one).
      const rawQuery = ctx.querystring ? ctx.query : NO_QUERY;
      assertKnownQuery(rawQuery, spec.query);
      // Declared parameters only, so the 422 of U+0000 is one the route declares.
      // (Nothing to check without a query string or declared path parameters.)
      if (rawQuery !== NO_QUERY || spec.params)
        checkParameterText(ctx.querystring, spec.query ? rawQuery : {}, spec.params ? ctx.params : {});
      const params = parse(spec.params, ctx.params, 'path');
      const query = spec.query ? parseQuery(spec.query, plainQuery(rawQuery)) : undefined;
      return andThen(spec.body ? this.bodyOf(spec.body, spec.bodyLimitBytes, ctx) : undefined, (body) => {
        const input = { params, query, body, auth, ctx } as unknown as I;
        // Without a guard around it the handler's answer is written directly.
        if (around && auth) return around(ctx, auth, () => this.respond(spec, responses, input));
        return andThen(spec.handler(input), (result) => void this.write(spec, responses, ctx, result));
      });
    });
  }

  /** The route's JSON body, read and parsed: a body the route does not read as JSON (text/plain, a form) is refused, never read as empty. */
  private bodyOf(schema: Schema, limitBytes: number | undefined, ctx: Koa.Context): unknown {
    const sendsBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (sendsBody && !ctx.is('application/json', '+json'))
      throw new HttpError(415, `Unsupported media type ${ctx.request.type}: send application/json`);
    return sendsBody ? this.readBody(ctx, limitBytes).then(() => parsedBody(schema, ctx)) : parsedBody(schema, ctx);
  }

  /** Runs the handler and writes its answer into ctx (what a guard around the handler gets back). */
  private async respond<I>(
    spec: { method: string; path: string; handler: (input: I) => unknown },
    responses: Responses,
    input: I & { ctx: Koa.Context },
  ): Promise<Reply> {
    return this.write(spec, responses, input.ctx, await spec.handler(input));
  }

  /** Writes a handler's answer into ctx (checked against the declared schema when tests ask). */
  private write(spec: { method: string; path: string }, responses: Responses, ctx: Koa.Context, result: unknown): Reply {
    const r: Reply =
      result && typeof result === 'object' && '__reply' in result ? (result as Reply) : { __reply: true, status: 200, body: result };
    if (this.options.checkResponses) checkResponse(spec, responses, r);
    ctx.status = r.status;
    if (r.headers) ctx.set(r.headers);
    if (r.contentType) ctx.type = r.contentType;
    if (r.body !== undefined) ctx.body = r.body;
    return r;
  }

  private openApiConfig(
    spec: Omit<
      RouteSpec<Schema | undefined, Schema | undefined, Schema | undefined, AuthRule | 'public', Responses>,
      'handler' | 'responses'
    >,
    all: Responses,
    guardHeaders: Record<string, z.ZodType> = {},
  ): RouteConfig {
    const ownHeaders = spec.headers ?? spec.documented?.headers;
    const headers = Object.keys(guardHeaders).length > 0 ? z.object({ ...ownHeaders?.shape, ...guardHeaders }) : ownHeaders;
    const responses: RouteConfig['responses'] = {};
    for (const [status, r] of Object.entries(all)) {
      responses[status] = {
        description: r.description,
        ...(r.headers ? { headers: r.headers } : {}),
        ...(r.schema
          ? {
              content: {
                ...Object.fromEntries([r.contentType ?? 'application/json'].flat().map((type) => [type, { schema: r.schema! }])),
                ...(r.json ? { 'application/json': { schema: r.json } } : {}),
              },
            }
          : {}),
      };
    }
    return {
      method: spec.method,
      path: spec.path,
      tags: [spec.tag],
      summary: spec.summary,
      ...(spec.description ? { description: spec.description } : {}),
      // Session-only routes say so, so generated clients and the fuzzer send a session there.
      security:
        spec.auth === 'public'
          ? []
          : spec.auth.session
            ? [{ sessionAuth: [] }]
            : spec.auth.user
              ? [{ userAuth: [] }]
              : [{ bearerAuth: [] }],
      request: {
        ...(spec.params ? { params: spec.params as z.ZodObject } : {}),
        ...(spec.query ? { query: spec.query as z.ZodObject } : {}),
        ...(headers ? { headers } : {}),
        ...((spec.body ?? spec.documented?.body)
          ? {
              body: {
                content: Object.fromEntries(
                  (spec.body ? ['application/json'] : (spec.documented!.bodyContentTypes ?? ['application/json'])).map((type) => [
                    type,
                    { schema: (spec.body ?? spec.documented!.body)! },
                  ]),
                ),
                required: true,
              },
            }
          : {}),
      },
      responses,
    };
  }
}

/** Thrown (as a 500) when a route answers a status it does not declare, or a body its schema refuses. */
export class ResponseContractError extends Error {}

const isJson = (r: ResponseSpec) => r.contentType === undefined || [r.contentType].flat().includes('application/json');
const isStream = (body: unknown) => Buffer.isBuffer(body) || typeof (body as { pipe?: unknown } | null)?.pipe === 'function';

function checkResponse(spec: { method: string; path: string }, responses: Responses, r: Reply): void {
  const declared = responses[r.status];
  const where = `${spec.method.toUpperCase()} ${spec.path} answered ${r.status}`;
  if (!declared) throw new ResponseContractError(`${where}, a status it does not declare`);
  if (!declared.schema || !isJson(declared) || r.body === undefined || isStream(r.body)) return;
  const parsed = declared.schema.safeParse(JSON.parse(JSON.stringify(r.body)));
  if (!parsed.success) throw new ResponseContractError(`${where} with a body its schema refuses: ${z.prettifyError(parsed.error)}`);
}
