import type Koa from 'koa';
import { andThen } from '../maybe-promise';
import type { RouteStep } from './deadlines';
import { answerErrorAsPage } from './html-errors';
import { answerError, answerNotFound } from './errors';
import type { RequestLine, RequestLines } from './request-id';
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
  /** Serves the route within the request's deadlines. */
  withinDeadlines(ctx: Koa.Context, route: RouteStep): void | Promise<void>;
  /** The request's route, if one matches (api/route-dispatch.ts). */
  route: RouteStep;
}

/**
 * Every request's way to its route and back, as the app's one middleware: the request id, the client
 * address, the preflight, the method and length checks, the deadlines, the route; then a matched nothing's
 * 404, an error's answer, its page on a person-facing path, the closing of an unread body, the request line.
 *
 * One function calling plain steps in order rather than a Koa middleware per step, and waiting only when
 * a step does: each async step costs promises, and on Node 20 the request scope's async hooks tax every
 * promise (docs/performance.md, GET /me). A route answered at once is served without any.
 */
export function requestPipeline(steps: PipelineSteps): Koa.Middleware {
  const serveRoute = (ctx: Koa.Context): void | Promise<void> => {
    steps.refuseUndeclaredMethod(ctx);
    steps.refuseOversizedBody(ctx);
    return andThen(steps.withinDeadlines(ctx, steps.route), () => answerNotFound(ctx));
  };

  const answered = (ctx: Koa.Context, line: RequestLine, failure?: { error: unknown }): void => {
    try {
      if (failure) answerError(ctx, failure.error);
      answerErrorAsPage(ctx);
    } finally {
      closeUnreadBody(ctx);
      steps.lines.end(ctx, line);
    }
  };

  return (ctx) => {
    const line = steps.lines.begin(ctx); // first: it makes ctx.state
    steps.resolveClientAddress(ctx);
    let serving: void | Promise<void>;
    try {
      serving = steps.preflight(ctx) ?? serveRoute(ctx);
    } catch (error) {
      return answered(ctx, line, { error });
    }
    if (!(serving instanceof Promise)) return answered(ctx, line);
    return serving.then(
      () => answered(ctx, line),
      (error: unknown) => answered(ctx, line, { error }),
    );
  };
}
