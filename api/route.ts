import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { badRequest, fromZodError, type Location } from './errors';
import type { Tag } from './openapi-registry';
import type { AuthRule, Authenticator, RequestAuth } from './auth/context';
import { enforce } from './auth/guards';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Schema = z.ZodType;
type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface Reply {
  readonly __reply: true;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  contentType?: string;
}

/** A handler result with a status or headers other than 200 JSON. */
export const reply = (status: number, body?: unknown, headers?: Record<string, string>, contentType?: string): Reply => ({
  __reply: true,
  status,
  body,
  headers,
  contentType,
});

interface ResponseSpec {
  description: string;
  schema?: Schema;
  contentType?: string;
  headers?: Record<string, { description: string; schema: { type: 'string' | 'integer' } }>;
}

export interface RouteSpec<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined, A extends AuthRule | 'public'> {
  method: Method;
  /** OpenAPI form, e.g. /contacts/{contact_id}. */
  path: string;
  tag: Tag;
  summary: string;
  auth: A;
  params?: P;
  query?: Q;
  body?: B;
  /** Request headers to validate (names in lower case); the handler reads them from ctx. */
  headers?: z.ZodObject;
  responses: Record<number, ResponseSpec>;
  handler: (input: {
    params: Infer<P>;
    query: Infer<Q>;
    body: Infer<B>;
    auth: A extends 'public' ? undefined : RequestAuth;
    ctx: Koa.Context;
  }) => Promise<unknown>;
}

function parse<S extends Schema | undefined>(schema: S, input: unknown, location: Location): Infer<S> {
  if (!schema) return undefined as Infer<S>;
  const result = schema.safeParse(input);
  if (!result.success) throw fromZodError(result.error, location, input);
  return result.data as Infer<S>;
}

/**
 * A query parameter the route does not declare is refused with 400 `Unknown filter: x`, as the spec's
 * Errors table says, rather than silently ignored (a mistyped filter would return everything).
 */
function assertKnownQuery(query: Record<string, unknown>, schema: Schema): void {
  const shape = (schema as z.ZodObject).shape ?? {};
  const unknown = Object.keys(query).filter((key) => !(key in shape));
  if (unknown.length > 0) throw badRequest(`Unknown filter: ${unknown.join(', ')}`);
}

/**
 * A filter outside its allowed values is the spec's 400 "invalid enum value", checked here for every
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

/** Query strings arrive as string | string[]; single values are unwrapped so schemas see scalars. */
function plainQuery(query: Record<string, string | string[] | undefined>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) && v.length === 1 ? v[0] : v]));
}

/**
 * The one place a route is declared: it is registered in Koa and in the OpenAPI registry from the
 * same zod schemas, its auth rule is enforced, and its params, query and body are parsed before the
 * handler runs, so handlers never touch raw input.
 */
export class Routes {
  readonly router = new Router();
  readonly declared: { method: Method; path: string; auth: AuthRule | 'public' }[] = [];

  constructor(
    private readonly registry: OpenAPIRegistry,
    private readonly authenticator: Authenticator,
  ) {}

  add<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined, A extends AuthRule | 'public'>(
    spec: RouteSpec<P, Q, B, A>,
  ): void {
    this.declared.push({ method: spec.method, path: spec.path, auth: spec.auth });
    this.registry.registerPath(this.openApiConfig(spec));
    const koaPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
    this.router[spec.method](koaPath, async (ctx) => {
      let auth: RequestAuth | undefined;
      if (spec.auth !== 'public') {
        auth = await this.authenticator.authenticate(ctx);
        enforce(spec.auth, auth);
      }
      if (spec.headers) parse(spec.headers, ctx.headers, 'header');
      if (spec.query) assertKnownQuery(ctx.query, spec.query);
      const params = parse(spec.params, ctx.params, 'path') as Infer<P>;
      const query = parseQuery(spec.query, plainQuery(ctx.query)) as Infer<Q>;
      const rawBody = (ctx.request as { body?: unknown }).body;
      const body = spec.body ? parse(spec.body, rawBody ?? {}, 'body') : (undefined as Infer<B>);
      const result = await spec.handler({ params, query, body, auth: auth as never, ctx });
      if (result && typeof result === 'object' && '__reply' in result) {
        const r = result as Reply;
        ctx.status = r.status;
        if (r.headers) ctx.set(r.headers);
        if (r.contentType) ctx.type = r.contentType;
        if (r.body !== undefined) ctx.body = r.body;
      } else if (result !== undefined) {
        ctx.status = 200;
        ctx.body = result;
      }
    });
  }

  private openApiConfig(spec: RouteSpec<Schema | undefined, Schema | undefined, Schema | undefined, AuthRule | 'public'>): RouteConfig {
    const responses: RouteConfig['responses'] = {};
    for (const [status, r] of Object.entries(spec.responses)) {
      responses[status] = {
        description: r.description,
        ...(r.headers ? { headers: r.headers } : {}),
        ...(r.schema ? { content: { [r.contentType ?? 'application/json']: { schema: r.schema } } } : {}),
      };
    }
    return {
      method: spec.method,
      path: spec.path,
      tags: [spec.tag],
      summary: spec.summary,
      security: spec.auth === 'public' ? [] : [{ bearerAuth: [] }],
      request: {
        ...(spec.params ? { params: spec.params as z.ZodObject } : {}),
        ...(spec.query ? { query: spec.query as z.ZodObject } : {}),
        ...(spec.headers ? { headers: spec.headers } : {}),
        ...(spec.body ? { body: { content: { 'application/json': { schema: spec.body } }, required: true } } : {}),
      },
      responses,
    };
  }
}
