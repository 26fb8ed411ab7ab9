import { z } from 'zod';
import { voicePublicUrl } from '../../platform/core/config';
import * as widgets from '../../services/agent-widgets';
import type { AppDeps } from '../deps';
import { widgetCaller } from '../middleware/widget-preflight';
import { WIDGET_ASSET_BODIES, WIDGET_SCRIPT, renderWidgetPage, widgetPageCsp } from '../pages/widget';
import { reply, type Routes } from '../route';
import { OriginHeaders, PublicWidgetParams, WidgetAssetParams, WidgetLauncher, WidgetSession } from '../schemas/agent-widgets';
import { ErrorBody } from '../schemas/common';

const TAG = 'Agents' as const;
const widgetNotFound = { 404: { description: 'No such widget', schema: ErrorBody } } as const;
const originRefused = {
  403: { description: "The Origin header is missing or not one of the widget's allowed origins (no CORS headers)", schema: ErrorBody },
} as const;
const corsHeaders = {
  'Access-Control-Allow-Origin': { description: 'the Origin, when it is allowed', schema: { type: 'string' as const } },
};
const STATIC = { 'Cache-Control': 'public, max-age=300', 'X-Content-Type-Options': 'nosniff' };

/** A widget's public side, without a bearer token: the embed script, the page and its files, the launcher's config, sessions. */
export function registerWidgetRoutes(routes: Routes, deps: AppDeps): void {
  const limiters = widgets.createWidgetLimiters(deps.config);

  routes.add({
    method: 'get',
    path: '/widget.js',
    tag: TAG,
    summary: "The embed script: loaded with the attribute data-widget-id, it adds a floating button that opens the widget's page",
    auth: 'public',
    responses: { 200: { description: 'JavaScript', schema: z.string(), contentType: 'text/javascript' } },
    handler: async () =>
      reply(200, WIDGET_SCRIPT, { ...STATIC, 'Cross-Origin-Resource-Policy': 'cross-origin' }, 'text/javascript; charset=utf-8'),
  });

  routes.add({
    method: 'get',
    path: '/widget-assets/{file}',
    tag: TAG,
    summary: "The widget page's script, style and audio worklets",
    auth: 'public',
    params: WidgetAssetParams,
    responses: { 200: { description: 'The file', schema: z.string(), contentType: ['text/javascript', 'text/css'] } },
    handler: async ({ params }) => {
      const asset = WIDGET_ASSET_BODIES[params.file]!;
      return reply(200, asset.body, STATIC, asset.type);
    },
  });

  routes.add({
    method: 'get',
    path: '/widgets/{widget_id}',
    tag: TAG,
    summary: "The widget's page: talk to the agent from the microphone, with a live transcript",
    description:
      "Framed only by the widget's allowed origins (`Content-Security-Policy: frame-ancestors`); the iframe needs " +
      '`allow="microphone"`. The page opens its session from its own origin, which is always allowed.',
    auth: 'public',
    params: PublicWidgetParams,
    responses: {
      200: { description: 'HTML page (no outside resources)', schema: z.string(), contentType: 'text/html' },
      ...widgetNotFound,
    },
    handler: async ({ params }) => {
      const page = await widgets.widgetPageData(deps, params.widget_id);
      return reply(
        200,
        renderWidgetPage(page),
        {
          'Content-Security-Policy': widgetPageCsp(page.allowedOrigins, voicePublicUrl(deps.config)),
          'Cache-Control': 'no-store',
          'Referrer-Policy': 'no-referrer',
          'X-Content-Type-Options': 'nosniff',
        },
        'text/html; charset=utf-8',
      );
    },
  });

  routes.add({
    method: 'get',
    path: '/widgets/{widget_id}/config',
    tag: TAG,
    summary: "The floating button's look and the page it opens, for widget.js on an allowed origin (CORS)",
    auth: 'public',
    params: PublicWidgetParams,
    headers: OriginHeaders,
    responses: {
      200: { description: 'The launcher', schema: WidgetLauncher, headers: corsHeaders },
      ...originRefused,
      ...widgetNotFound,
    },
    handler: async ({ params, ctx }) => widgets.launcherConfig(deps, params.widget_id, widgetCaller(ctx, deps)),
  });

  routes.add({
    method: 'post',
    path: '/widgets/{widget_id}/sessions',
    tag: TAG,
    summary: "Open a voice session with the widget's agent from a browser on an allowed origin (CORS; OPTIONS answers the preflight)",
    description:
      'Answers a voice session token (channel `widget`, bound to the Origin, valid two minutes) and the engine WebSocket to ' +
      "open with it, for the agent's published version. Limited per client address (WIDGET_SESSIONS_PER_ADDRESS) and per " +
      'widget (WIDGET_SESSIONS_PER_WIDGET) in each WIDGET_RATE_WINDOW_SECONDS.',
    auth: 'public',
    params: PublicWidgetParams,
    headers: OriginHeaders,
    responses: {
      200: { description: 'The session', schema: WidgetSession, headers: corsHeaders },
      ...originRefused,
      ...widgetNotFound,
      409: { description: 'The agent has no published version, or is not active', schema: ErrorBody },
      429: {
        description: 'Too many sessions from this address or for this widget; retry after Retry-After seconds',
        schema: ErrorBody,
        headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' as const } } },
      },
    },
    handler: async ({ params, ctx }) =>
      reply(200, await widgets.mintWidgetSession({ ...deps, limiters }, params.widget_id, widgetCaller(ctx, deps)), {
        'Cache-Control': 'no-store',
      }),
  });
}
