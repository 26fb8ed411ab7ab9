import { getAgent } from '../db/agents';
import * as widgets from '../db/agent-widgets';
import type { Db } from '../db/client';
import {
  MAX_WIDGETS_PER_AGENT,
  WIDGET_SESSION_TTL_SECONDS,
  type WidgetConfig,
  originAllowed,
  widgetConfigOf,
} from '../domain/agent-widgets';
import { conflict, forbiddenAction, invalid, notFound, rateLimited } from '../domain/errors';
import { addressSubject } from '../platform/core/client-address';
import { type Config, voicePublicUrl } from '../platform/core/config';
import { RateLimiter } from '../platform/core/rate-limit';
import { mintVoiceSessionToken } from './conversations/session-tokens';
import type { ServiceDeps } from './deps';

const agentNotFound = () => notFound('Agent not found');
const widgetNotFound = () => notFound('Widget not found');

export function widgetView(row: widgets.WidgetRow) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    name: row.name,
    config: widgetConfigOf(row.config),
    allowed_origins: row.allowed_origins,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

async function requireAgent(db: Db, orgId: string, agentId: string, forUpdate = false) {
  const agent = await getAgent(db, orgId, agentId, { forUpdate });
  if (!agent) throw agentNotFound();
  return agent;
}

export async function listAgentWidgets(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string) {
  await requireAgent(deps.sql, orgId, agentId);
  return { data: (await widgets.listWidgets(deps.sql, orgId, agentId)).map(widgetView) };
}

export interface WidgetCreate {
  name: string;
  config: WidgetConfig;
  allowed_origins: string[];
}

/** A new widget; the agent's row lock makes the count and the insert one step, so the cap holds under concurrency. */
export async function createWidget(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string, input: WidgetCreate) {
  return deps.sql.begin(async (tx) => {
    await requireAgent(tx, orgId, agentId, true);
    if ((await widgets.countWidgets(tx, orgId, agentId)) >= MAX_WIDGETS_PER_AGENT)
      throw conflict(`An agent has at most ${MAX_WIDGETS_PER_AGENT} widgets`);
    return widgetView(await widgets.insertWidget(tx, orgId, agentId, input));
  });
}

export async function getWidget(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string, widgetId: string) {
  await requireAgent(deps.sql, orgId, agentId);
  const row = await widgets.getWidget(deps.sql, orgId, agentId, widgetId);
  if (!row) throw widgetNotFound();
  return widgetView(row);
}

export interface WidgetPatch {
  name?: string;
  config?: Partial<WidgetConfig>;
  allowed_origins?: string[];
}

/** Changes the fields sent; `config` changes the keys it names and keeps the others. */
export async function updateWidget(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string, widgetId: string, patch: WidgetPatch) {
  if (Object.keys(patch).length === 0) throw invalid('Nothing to update');
  return deps.sql.begin(async (tx) => {
    await requireAgent(tx, orgId, agentId);
    const row = await widgets.getWidget(tx, orgId, agentId, widgetId, { forUpdate: true });
    if (!row) throw widgetNotFound();
    const updated = await widgets.updateWidget(tx, orgId, agentId, widgetId, {
      name: patch.name ?? row.name,
      config: { ...widgetConfigOf(row.config), ...patch.config },
      allowed_origins: patch.allowed_origins ?? row.allowed_origins,
    });
    return widgetView(updated!);
  });
}

export async function deleteWidget(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string, widgetId: string): Promise<void> {
  await requireAgent(deps.sql, orgId, agentId);
  if (!(await widgets.deleteWidget(deps.sql, orgId, agentId, widgetId))) throw widgetNotFound();
}

// ---- public (no token): the page, the launcher's config, sessions ------------------------------------------

/** The per-process limits of session minting; one set per running app. */
export interface WidgetLimiters {
  perAddress: RateLimiter;
  perWidget: RateLimiter;
}

export function createWidgetLimiters(config: Config): WidgetLimiters {
  const windowSeconds = config.WIDGET_RATE_WINDOW_SECONDS;
  return {
    perAddress: new RateLimiter({ limit: config.WIDGET_SESSIONS_PER_ADDRESS, windowSeconds }),
    perWidget: new RateLimiter({ limit: config.WIDGET_SESSIONS_PER_WIDGET, windowSeconds }),
  };
}

/**
 * The origin of the widget's own page: PUBLIC_BASE_URL's when set (behind a proxy the request's own scheme
 * and host are the proxy's), else the one the request came to.
 */
export function ownOrigin(config: Pick<Config, 'PUBLIC_BASE_URL'>, requestOrigin: string): string {
  return config.PUBLIC_BASE_URL ? new URL(config.PUBLIC_BASE_URL).origin : requestOrigin;
}

/** A browser request to a widget's public endpoints: where it came from. */
export interface WidgetCaller {
  /** The `Origin` header, as the browser sent it. */
  origin: string | undefined;
  /** The widget page's own origin (see ownOrigin). */
  ownOrigin: string;
  /** The client address (limits only; never stored). */
  address: string;
  /** Called once the origin is known to be allowed, before anything else can refuse the request, so the page can read every later answer. */
  allowOrigin(origin: string): void;
}

async function publicWidget(deps: Pick<ServiceDeps, 'sql'>, widgetId: string) {
  const row = await widgets.findPublicWidget(deps.sql, widgetId);
  if (!row) throw widgetNotFound();
  return row;
}

async function allowedWidget(deps: Pick<ServiceDeps, 'sql'>, widgetId: string, caller: WidgetCaller) {
  const row = await publicWidget(deps, widgetId);
  if (!originAllowed(caller.origin, row.allowed_origins, caller.ownOrigin)) throw forbiddenAction('Origin not allowed for this widget');
  caller.allowOrigin(caller.origin!);
  return row;
}

/** What the widget's page shows, and where it may be framed. */
export async function widgetPageData(deps: Pick<ServiceDeps, 'sql'>, widgetId: string) {
  const row = await publicWidget(deps, widgetId);
  return { widgetId: row.id, agentName: row.agent_name, config: widgetConfigOf(row.config), allowedOrigins: row.allowed_origins };
}

/** The answer of a CORS preflight: throws 404 or 403 unless the origin may use the widget. */
export async function checkWidgetOrigin(deps: Pick<ServiceDeps, 'sql'>, widgetId: string, caller: WidgetCaller): Promise<void> {
  await allowedWidget(deps, widgetId, caller);
}

/** The floating button's look and the page it opens, for the embedding script on an allowed origin. */
export async function launcherConfig(deps: Pick<ServiceDeps, 'sql'>, widgetId: string, caller: WidgetCaller) {
  const row = await allowedWidget(deps, widgetId, caller);
  return { widget_id: row.id, page_url: `${caller.ownOrigin}/widgets/${row.id}`, config: widgetConfigOf(row.config) };
}

function take(limiter: RateLimiter, key: string): void {
  const result = limiter.take(key);
  if (!result.ok) throw rateLimited('Too many sessions, retry later', result.retryAfterSeconds);
}

/**
 * A voice session for a visitor's browser: a short-lived token for the engine's widget WebSocket, bound to
 * the caller's origin (the engine compares the socket's Origin with it) and to the agent's published version.
 */
export async function mintWidgetSession(
  deps: Pick<ServiceDeps, 'sql' | 'config'> & { limiters: WidgetLimiters },
  widgetId: string,
  caller: WidgetCaller,
) {
  // The address first, before any lookup: a flood of requests costs its budget whatever it names.
  take(deps.limiters.perAddress, addressSubject(caller.address));
  const row = await allowedWidget(deps, widgetId, caller);
  take(deps.limiters.perWidget, row.id);
  if (!row.agent_active) throw conflict('The agent is not active');
  if (row.published_version === null) throw conflict('The agent has no published version');
  const { token, expiresAt } = await mintVoiceSessionToken(
    deps.config,
    {
      org: row.org_id,
      agent: row.agent_id,
      version: row.published_version,
      channel: 'widget',
      direction: 'inbound',
      widget: row.id,
      origin: caller.origin!,
    },
    WIDGET_SESSION_TTL_SECONDS,
  );
  return {
    token,
    websocket_url: `${voicePublicUrl(deps.config)}/widget?token=${encodeURIComponent(token)}`,
    expires_at: expiresAt.toISOString(),
    agent: { name: row.agent_name },
  };
}
