import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { escapeHtml } from '../../domain/cards';
import type { WidgetConfig } from '../../domain/agent-widgets';

/**
 * The widget's page (GET /widgets/{widget_id}), its script and style, its two audio worklets, and the embed
 * script (GET /widget.js): plain static files under widget/, read once, no build step and no outside resources.
 * The page is the one file rendered per widget: its texts escaped, its data in a JSON block (not a script).
 */
const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'widget');
const read = (file: string) => fs.readFileSync(path.join(DIR, file), 'utf8');

const TEMPLATE = read('page.html');

export const WIDGET_SCRIPT = read('widget.js');

export const WIDGET_ASSET_BODIES: Record<string, { body: string; type: string }> = {
  'page.js': { body: read('page.js'), type: 'text/javascript; charset=utf-8' },
  'page.css': { body: read('page.css'), type: 'text/css; charset=utf-8' },
  'capture-worklet.js': { body: read('capture-worklet.js'), type: 'text/javascript; charset=utf-8' },
  'playback-worklet.js': { body: read('playback-worklet.js'), type: 'text/javascript; charset=utf-8' },
};

export interface WidgetPageInput {
  widgetId: string;
  agentName: string;
  config: WidgetConfig;
}

/** JSON safe inside a `<script type="application/json">` block: no `<` can close it. */
const jsonBlock = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

export function renderWidgetPage({ widgetId, agentName, config }: WidgetPageInput): string {
  const texts: Record<string, string> = {
    title: escapeHtml(config.title ?? agentName),
    greeting: escapeHtml(config.greeting ?? ''),
    button_label: escapeHtml(config.button_label),
  };
  const data = jsonBlock({ widget_id: widgetId, agent_name: agentName, config });
  return TEMPLATE.replace(/@(\w+)@/g, (_, key: string) => texts[key] ?? '').replace(
    '<script id="widget-data" type="application/json">{}</script>',
    () => `<script id="widget-data" type="application/json">${data}</script>`,
  );
}

/**
 * The page's policy: its own scripts, styles and worklets only; connections to this origin (sessions) and to
 * the engine; embeddable only by the widget's allowed origins.
 */
export function widgetPageCsp(allowedOrigins: readonly string[], voiceUrl: string): string {
  const voice = new URL(voiceUrl);
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src 'self' ${voice.protocol}//${voice.host}`,
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${allowedOrigins.join(' ')}`,
  ].join('; ');
}
