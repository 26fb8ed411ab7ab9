import type Koa from 'koa';
import { answerErrorAsPage } from './html-errors';
import { answerError, answerNotFound } from './errors';
import type { RequestLines } from './request-id';
import { closeUnreadBody } from './unread-body';

/** The steps every request takes before and around its route, each defined in a file of its own. */
export interface PipelineSteps {
  resolveClientAddress(ctx: Koa.Context): void;
  lines: RequestLines;
  /** Answers a widget session's CORS preflight (a promise), or leaves the request to the rest (undefined). */
  preflight(ctx: Koa.Context): Promise<void> | undefined;
  /** Throws the 405 of a method the path does not declare. */
  refuseUndeclaredMethod(ctx: Koa.Context): void;
  /** Throws the 413 of a declared length over the limit, before anything is read. */
  refuseOversizedBody(ctx: Koa.Context): void;
  /** Serves the route (`next`) within the request's deadlines. */
  withinDeadlines: Koa.Middleware;
}

/**
 * Every request's way to its route and back, as one middleware: the request id, the client address,
 * the preflight, the method and length checks, the deadlines; then a matched nothing's 404, an error's
 * answer, its page on a person-facing path, the closing of an unread body, the request line.
 *
 * One function calling plain steps in order rather than a Koa middleware per step: each async middleware
 * level costs two promises a request, and on Node 20 the request scope's async hooks tax every promise
 * (docs/performance.md, GET /me). Only the route is awaited.
 */
export function requestPipeline(steps: PipelineSteps): Koa.Middleware {
  return async (ctx, next) => {
    const line = steps.lines.begin(ctx); // first: it makes ctx.state
    steps.resolveClientAddress(ctx);
    try {
      try {
        const preflight = steps.preflight(ctx);
        if (preflight !== undefined) await preflight;
        else {
          steps.refuseUndeclaredMethod(ctx);
          steps.refuseOversizedBody(ctx);
          await steps.withinDeadlines(ctx, next);
          answerNotFound(ctx);
        }
      } catch (error) {
        answerError(ctx, error);
      }
      answerErrorAsPage(ctx);
    } finally {
      closeUnreadBody(ctx);
      steps.lines.end(ctx, line);
    }
  };
}
