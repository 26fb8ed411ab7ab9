import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type Koa from 'koa';
import { DomainError, type FailureKind } from '../../domain/errors';
import { HttpError, ValidationError } from '../errors';
import { StorageError } from '../../platform/adapters/storage/types';
import { isTemporalUnavailable } from '../../platform/core/temporal';
import { isDatabaseUnavailable } from '../../services/database-errors';
import { invalidValueIssue } from './database-errors';

interface BodyParserError {
  status?: number;
  type?: string;
  body?: string;
  message?: string;
}

/** The HTTP status of each domain failure: the one place domain outcomes meet HTTP. */
export const STATUS_OF: Record<FailureKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  unprocessable: 422,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
  unsupported_media: 415,
  rate_limited: 429,
  upstream: 502,
  unavailable: 503,
};

/** Every failure becomes the contract's error body; a stack only ever reaches the log. */
export function answerError(ctx: Koa.Context, error: unknown): void {
  const e = error as BodyParserError;
  const invalidValue = invalidValueIssue(error, ctx.method);
  if (error instanceof DomainError) {
    if (error.kind === 'upstream' || error.kind === 'unavailable') ctx.state.log.warn({ err: error }, 'dependency failed');
    ctx.status = STATUS_OF[error.kind];
    if (error.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(Math.ceil(error.retryAfterSeconds)));
    ctx.body = error.fields
      ? { detail: error.fields.map((f) => ({ type: 'value_error', ...f, input: null, ctx: {} })) }
      : { detail: error.detail };
  } else if (error instanceof HttpError) {
    ctx.status = error.status;
    ctx.set(error.headers);
    ctx.body = { detail: error.detail };
  } else if (error instanceof ValidationError) {
    ctx.status = 422;
    ctx.body = { detail: error.issues.map((issue) => ({ ...issue, input: boundedEcho(issue.input) })) };
  } else if (e.type === 'entity.too.large' || e.status === 413) {
    ctx.status = 413;
    ctx.body = { detail: 'Request body too large' };
  } else if (e.type === 'entity.parse.failed' || (error instanceof SyntaxError && e.status === 400)) {
    ctx.status = 422;
    ctx.body = {
      detail: [{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {}, ctx: { error: jsonErrorText(e.message) } }],
    };
  } else if (error instanceof WorkflowExecutionAlreadyStartedError) {
    ctx.status = 409;
    ctx.body = { detail: 'Already running' };
  } else if (error instanceof WorkflowNotFoundError) {
    ctx.status = 404;
    ctx.body = { detail: 'Not Found' };
  } else if (invalidValue) {
    ctx.status = 422;
    ctx.body = { detail: [invalidValue] };
  } else if (isDatabaseUnavailable(error)) {
    ctx.state.log.error({ err: error }, 'database unavailable');
    ctx.status = 502;
    ctx.body = { detail: 'Database unavailable' };
  } else if (error instanceof StorageError) {
    ctx.state.log.error({ err: error }, 'object storage failed');
    ctx.status = 502;
    ctx.body = { detail: 'Object storage unavailable' };
  } else if (isTemporalUnavailable(error)) {
    ctx.state.log.error({ err: error }, 'workflow engine unavailable');
    ctx.status = 503;
    ctx.body = { detail: 'Workflow engine unavailable, try again shortly' };
  } else {
    ctx.state.log.error({ err: error }, 'unhandled error');
    ctx.status = 500;
    ctx.body = { detail: 'Internal Server Error' };
  }
}

/**
 * The JSON parser's complaint without the excerpt of the body V8 quotes in it (`Unexpected token 'x',
 * "{"password": hunt…" is not valid JSON`): a malformed body may carry secrets, and is never echoed.
 */
export function jsonErrorText(message: string | undefined): string {
  if (!message) return 'Invalid JSON';
  return message
    .replace(/,\s*(\.\.\.)?".*"(\.\.\.)?\s+is not valid JSON$/s, ' in JSON')
    .replace(/^(\.\.\.)?".*"(\.\.\.)?\s+is not valid JSON$/s, 'Invalid JSON');
}

const ECHO = { depth: 8, items: 50, chars: 2048 };

/**
 * The `input` a 422 echoes, cut to a bounded size and depth: deeper values become null, long strings
 * and collections are truncated, so an error answer never costs more than the request it answers.
 */
export function boundedEcho(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.length > ECHO.chars ? `${value.slice(0, ECHO.chars)}…` : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= ECHO.depth) return null;
  if (Array.isArray(value)) return value.slice(0, ECHO.items).map((v) => boundedEcho(v, depth + 1));
  const entries = Object.entries(value).slice(0, ECHO.items);
  return Object.fromEntries(entries.map(([k, v]) => [k, boundedEcho(v, depth + 1)]));
}

/** A route that matched nothing leaves a bare 404; give it the contract's error body. */
export function answerNotFound(ctx: Koa.Context): void {
  if (ctx.status === 404 && ctx.body == null) {
    ctx.status = 404; // Koa would otherwise turn an implicit 404 into 200 once a body is set
    ctx.body = { detail: 'Not Found' };
  }
}

/**
 * Bodies over the limit are refused before they are read, whatever their content type. Exempt paths
 * (uploads) skip the limit and the JSON parser: they stream their bodies themselves.
 */
export function bodyLimit(limitOf: (path: string) => number, exempt: (path: string) => boolean): (ctx: Koa.Context) => void {
  return (ctx) => {
    if (exempt(ctx.path)) {
      ctx.disableBodyParser = true;
      return;
    }
    const length = Number(ctx.get('Content-Length') || 0);
    if (length > limitOf(ctx.path)) throw new HttpError(413, 'Request body too large');
  };
}
