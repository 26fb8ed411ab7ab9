import type Koa from 'koa';
import { checkWidgetOrigin, ownOrigin, type WidgetCaller } from '../../services/agent-widgets';
import type { AppDeps } from '../deps';
import { clientAddress } from './client-address';

/** Who calls a widget's public endpoint; an allowed origin gets its CORS header (every answer depends on Origin). */
export function widgetCaller(ctx: Koa.Context, deps: Pick<AppDeps, 'config'>): WidgetCaller {
  ctx.vary('Origin');
  return {
    origin: ctx.get('Origin') || undefined,
    ownOrigin: ownOrigin(deps.config, ctx.origin),
    address: clientAddress(ctx),
    allowOrigin: (origin) => ctx.set('Access-Control-Allow-Origin', origin),
  };
}

const SESSIONS = /^\/widgets\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/sessions$/i;

/**
 * The CORS preflight of `POST /widgets/{widget_id}/sessions` (a site's own script sending JSON): 204 with the
 * CORS headers for an allowed origin, 403 without them otherwise, 404 for no such widget. Answered before the
 * method check, which refuses OPTIONS everywhere else (405); an OPTIONS that is not a preflight goes on to it
 * (undefined: not answered here).
 */
export function widgetPreflight(deps: AppDeps): (ctx: Koa.Context) => Promise<void> | undefined {
  const answer = async (ctx: Koa.Context, widgetId: string) => {
    await checkWidgetOrigin(deps, widgetId, widgetCaller(ctx, deps));
    ctx.set({
      'Access-Control-Allow-Methods': 'POST',
      'Access-Control-Allow-Headers': 'Content-Type',
      'Access-Control-Max-Age': '600',
    });
    ctx.status = 204;
  };
  return (ctx) => {
    const match = ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method') ? SESSIONS.exec(ctx.path) : null;
    return match ? answer(ctx, match[1]!.toLowerCase()) : undefined;
  };
}
