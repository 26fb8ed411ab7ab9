import { z } from 'zod';
import { TRIMMED, trimmedText } from './trimmed-text';

// Rules of an agent's widgets: the origins that may embed one, its look, and the bounds of a session.
// Zod's own `.meta` (not `.openapi`): domain schemas are imported without the OpenAPI extension.

/** Widgets one agent may have: the agent's read lists them all. */
export const MAX_WIDGETS_PER_AGENT = 50;
export const MAX_ALLOWED_ORIGINS = 50;
/** A widget session token opens one WebSocket soon after it is minted; the conversation itself may last longer. */
export const WIDGET_SESSION_TTL_SECONDS = 120;

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** The last label begins with a letter: no IP addresses over https (a browser's Origin would name them otherwise). */
const TOP_LABEL = '[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const PORT = '(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?';

/**
 * An origin a widget may be embedded on: `https://host[:port]`, or plain http on the loopback names only
 * (`http://localhost[:port]`, `http://127.0.0.1[:port]`), for development. No path (a trailing `/` is
 * dropped), no query, no user, no wildcard: a browser's `Origin` header is compared with it exactly. White
 * space around it is trimmed first, and the document's pattern says so (as trimmed names do).
 */
const ORIGIN_BODY = `(?:https://(?:${LABEL}\\.)*${TOP_LABEL}|http://(?:localhost|127\\.0\\.0\\.1))${PORT}/?`;
export const ORIGIN_PATTERN = `^[${TRIMMED}]*${ORIGIN_BODY}[${TRIMMED}]*$`;
const ORIGIN = new RegExp(`^${ORIGIN_BODY}$`);

/** The origin as a browser serializes it: lower case, without a trailing slash or the scheme's default port. */
export function normalizeOrigin(origin: string): string {
  const bare = origin.toLowerCase().replace(/\/$/, '');
  return bare.replace(/^(https:\/\/[^/]+):443$/, '$1').replace(/^(http:\/\/[^/]+):80$/, '$1');
}

export const WidgetOrigin = z
  .string()
  .max(300)
  .trim()
  .regex(ORIGIN, 'must be an origin https://host[:port], or http://localhost[:port] or http://127.0.0.1[:port], without a path')
  .transform(normalizeOrigin)
  .meta({ pattern: ORIGIN_PATTERN, example: 'https://www.example.com' });

/** 1 to 50 origins, kept once each in the order given (after normalization). */
export const AllowedOrigins = z
  .array(WidgetOrigin)
  .min(1)
  .max(MAX_ALLOWED_ORIGINS)
  .transform((origins) => [...new Set(origins)])
  .meta({
    description:
      'Where the widget may run: the pages embedding it (its page answers `Content-Security-Policy: frame-ancestors` with ' +
      'these) and the origins that may open sessions from their own script (CORS). Exact origins, normalized to lower case ' +
      'without a default port; `*` is not accepted',
  });

export const WIDGET_POSITIONS = ['bottom-right', 'bottom-left'] as const;

const fields = {
  title: trimmedText(80).nullable().meta({ description: "the page's heading; null: the agent's name" }),
  greeting: trimmedText(500).nullable().meta({ description: 'text shown to the visitor above the button (not spoken)' }),
  theme_color: z
    .string()
    .trim()
    .regex(/^#[0-9A-Fa-f]{6}$/, 'must be a color #rrggbb')
    .transform((color) => color.toLowerCase())
    .meta({
      pattern: `^[${TRIMMED}]*#[0-9A-Fa-f]{6}[${TRIMMED}]*$`,
      example: '#0f766e',
      description: 'the button and accent color, #rrggbb',
    }),
  button_label: trimmedText(40).meta({ description: 'the label of the floating button and of the start button' }),
  position: z.enum(WIDGET_POSITIONS).meta({ description: 'the corner of the page the floating button sits in' }),
};

export const WIDGET_CONFIG_DEFAULTS = {
  title: null,
  greeting: null,
  theme_color: '#0f766e',
  button_label: 'Talk to us',
  position: 'bottom-right',
} as const;

/** A widget's look; every field optional on create, defaults filled. */
export const WidgetConfigInput = z.strictObject({
  title: fields.title.default(WIDGET_CONFIG_DEFAULTS.title),
  greeting: fields.greeting.default(WIDGET_CONFIG_DEFAULTS.greeting),
  theme_color: fields.theme_color.default(WIDGET_CONFIG_DEFAULTS.theme_color),
  button_label: fields.button_label.default(WIDGET_CONFIG_DEFAULTS.button_label),
  position: fields.position.default(WIDGET_CONFIG_DEFAULTS.position),
});
export type WidgetConfig = z.output<typeof WidgetConfigInput>;

/** The fields sent in an update; the others keep their values. */
export const WidgetConfigPatch = z.strictObject(fields).partial();

/** The stored config with defaults for anything missing (a row written before a field existed). */
export function widgetConfigOf(stored: unknown): WidgetConfig {
  const parsed = WidgetConfigInput.safeParse(stored ?? {});
  return parsed.success ? parsed.data : WidgetConfigInput.parse({});
}

/**
 * Whether a browser page at `origin` may use the widget: one of its allowed origins, or the widget page's own
 * origin (the API's), whose embedding the page's frame-ancestors already limits to the allowed origins.
 */
export function originAllowed(origin: string | undefined, allowed: readonly string[], ownOrigin: string): boolean {
  if (!origin || origin === 'null') return false;
  return origin === ownOrigin || allowed.includes(origin);
}
