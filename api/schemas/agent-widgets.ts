import { z } from 'zod';
import {
  AllowedOrigins,
  MAX_WIDGETS_PER_AGENT,
  WIDGET_POSITIONS,
  WIDGET_SESSION_TTL_SECONDS,
  WidgetConfigInput,
  WidgetConfigPatch,
} from '../../domain/agent-widgets';
import { trimmedText } from '../../domain/trimmed-text';
import { Uuid } from './common';

export const WidgetParams = z.object({ id: Uuid, widget_id: Uuid });
export const PublicWidgetParams = z.object({ widget_id: Uuid });

export const WidgetCreateBody = z
  .object({
    name: trimmedText(200),
    allowed_origins: AllowedOrigins,
    config: WidgetConfigInput.default(WidgetConfigInput.parse({})),
  })
  .strict()
  .openapi('WidgetCreate', { description: `An agent has at most ${MAX_WIDGETS_PER_AGENT} widgets` });

export const WidgetUpdateBody = z
  .object({
    name: trimmedText(200).optional(),
    allowed_origins: AllowedOrigins.optional(),
    config: WidgetConfigPatch.optional().openapi({ description: 'the fields to change; the others keep their values' }),
  })
  .strict()
  // An empty body is 400 (nothing to update): the document states that a field is needed.
  .openapi('WidgetUpdate', { minProperties: 1 });

export const WidgetConfigView = z
  .object({
    title: z.string().nullable(),
    greeting: z.string().nullable(),
    theme_color: z.string(),
    button_label: z.string(),
    position: z.enum(WIDGET_POSITIONS),
  })
  .openapi('WidgetConfig');

export const Widget = z
  .object({
    id: Uuid,
    agent_id: Uuid,
    name: z.string(),
    config: WidgetConfigView,
    allowed_origins: z.array(z.string()),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Widget');

export const WidgetList = z.object({ data: z.array(Widget).openapi({ description: 'oldest first' }) }).openapi('WidgetList');

export const WidgetLauncher = z
  .object({
    widget_id: Uuid,
    page_url: z.string().openapi({ description: "the widget's page, to open in an iframe" }),
    config: WidgetConfigView,
  })
  .openapi('WidgetLauncher');

export const WidgetSession = z
  .object({
    token: z
      .string()
      .openapi({ description: `a voice session token (channel widget), valid ${WIDGET_SESSION_TTL_SECONDS} s to open the WebSocket` }),
    websocket_url: z.string().openapi({ description: "the engine's widget WebSocket with the token: VOICE_PUBLIC_URL/widget?token=…" }),
    expires_at: z.string(),
    agent: z.object({ name: z.string() }),
  })
  .openapi('WidgetSession');

/** The request headers the public widget endpoints read. */
export const OriginHeaders = z.object({
  origin: z.string().max(300).optional().openapi({ description: "the browser's Origin; it must be one of the widget's allowed origins" }),
});

export const WIDGET_ASSETS = ['page.js', 'page.css', 'capture-worklet.js', 'playback-worklet.js'] as const;
export const WidgetAssetParams = z.object({ file: z.enum(WIDGET_ASSETS) });
