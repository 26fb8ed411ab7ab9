// Integrations: connected third-party accounts, the connect tokens that start their consent, and the
// rules both follow. Pure: shared by the API, the services and the tests.

export const CONNECTION_STATUSES = ['active', 'needs_reconnect', 'revoked'] as const;

/** The integrations connected with an account's API keys rather than OAuth: the telephony providers, by name. */
export const TELEPHONY_PROVIDER_NAMES = { twilio: 'Twilio', vapi: 'Vapi' } as const;
export type TelephonyProvider = keyof typeof TELEPHONY_PROVIDER_NAMES;
export const TELEPHONY_PROVIDERS = Object.keys(TELEPHONY_PROVIDER_NAMES) as TelephonyProvider[];
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

/**
 * The speech and model providers an organization connects with an API key (one each): the voice engine
 * runs an agent's transcriber, voice or model through them when its configuration names them.
 */
export const SPEECH_PROVIDER_NAMES = { deepgram: 'Deepgram', elevenlabs: 'ElevenLabs', cartesia: 'Cartesia', openai: 'OpenAI' } as const;
export type SpeechProvider = keyof typeof SPEECH_PROVIDER_NAMES;
export const SPEECH_PROVIDERS = Object.keys(SPEECH_PROVIDER_NAMES) as SpeechProvider[];

/** Connect tokens are `ict_` and 32 random bytes (base64url); only their SHA-256 is stored. */
export const CONNECT_TOKEN_PREFIX = 'ict_';
export const CONNECT_TOKEN_PATTERN = /^ict_[A-Za-z0-9_-]{43}$/;

/** Lead of a connection's before-expiry refresh schedule, in seconds. */
export const REFRESH_LEAD_SECONDS = 300;

/** Name of the workflow credential that holds a connection's tokens (unique per organization). */
export const connectionCredentialName = (integration: string, connectionId: string) => `integration:${integration}:${connectionId}`;

/** What makes a redirect target acceptable: its origin is in the allowlist. */
export function originAllowed(url: string, allowedOrigins: readonly string[]): boolean {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    return false;
  }
  return allowedOrigins.some((allowed) => allowed === origin);
}

/** A refresh error that says the grant itself is gone (RFC 6749 §5.2): only a new consent helps. */
export const isInvalidGrant = (error: string): boolean => /\binvalid_grant\b/.test(error);

/** Why a connect token cannot be used (any other state: it can). */
export type TokenRefusal = 'unknown' | 'expired' | 'used';

export function tokenRefusal(token: { expires_at: Date; used_at: Date | null } | undefined, now: Date): TokenRefusal | null {
  if (!token) return 'unknown';
  if (token.used_at) return 'used';
  if (token.expires_at.getTime() <= now.getTime()) return 'expired';
  return null;
}

export const REFUSAL_TEXT: Record<TokenRefusal, string> = {
  unknown: 'This connect link is not valid. Ask the application that sent you here for a new one.',
  expired: 'This connect link has expired. Ask the application that sent you here for a new one.',
  used: 'This connect link has already been used. Each link works once; ask for a new one.',
};

/** Granted scopes from a token response's `scope` (space-separated), else those requested. */
export function grantedScopes(scope: unknown, requested: readonly string[]): string[] {
  if (typeof scope === 'string' && scope.trim() !== '') return [...new Set(scope.trim().split(/\s+/))].sort();
  return [...new Set(requested)].sort();
}

// ---- the connect pages (unauthenticated, server-rendered, no script) ---------------------------------

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE =
  'body{margin:0;font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Arial,sans-serif;background:#f3f4f6;color:#111827}' +
  'main{max-width:460px;margin:0 auto;padding:32px 16px}.box{background:#fff;border-radius:14px;padding:24px;box-shadow:0 1px 3px rgba(0,0,0,.1)}' +
  'h1{font-size:21px;margin:0 0 12px}ul{padding:0;list-style:none}li{border:1px solid #e5e7eb;border-radius:10px;padding:14px;margin:10px 0}' +
  '.tag{font-size:12px;background:#fef3c7;color:#92400e;border-radius:6px;padding:2px 6px;margin-left:6px}' +
  'a.connect{display:block;text-align:center;margin-top:10px;padding:10px;border-radius:8px;background:#2563eb;color:#fff;text-decoration:none;font-weight:600}' +
  '.scopes{font-size:13px;color:#4b5563;margin:6px 0 0}.muted{color:#6b7280;font-size:14px}';

/** Headers of every connect page: nothing may run, nothing is cached, and the token never leaks in a Referer. */
export const PAGE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main><div class="box">${body}</div></main></body></html>`;
}

export interface ConnectChoice {
  key: string;
  name: string;
  description: string;
  simulated: boolean;
  scopes: string[];
  /** Where the choice's button leads (starts the provider's consent). */
  href: string;
}

export function renderConnectPage(choices: readonly ConnectChoice[], reconnect: boolean): string {
  const items = choices
    .map(
      (
        c,
      ) => `<li id="integration-${escapeHtml(c.key)}"><strong>${escapeHtml(c.name)}</strong>${c.simulated ? '<span class="tag">simulated</span>' : ''}
<div class="muted">${escapeHtml(c.description)}</div>
<p class="scopes">Asks for: ${c.scopes.map(escapeHtml).join(', ') || 'no scopes'}</p>
<a class="connect" rel="noreferrer" href="${escapeHtml(c.href)}">${reconnect ? 'Reconnect' : 'Connect'} ${escapeHtml(c.name)}</a></li>`,
    )
    .join('');
  const title = reconnect ? 'Reconnect your account' : 'Connect an account';
  return page(
    title,
    `<h1>${title}</h1><p class="muted">You will be sent to the provider to allow access; this link works once.</p><ul>${items}</ul>`,
  );
}

export function renderErrorPage(title: string, text: string): string {
  return page(title, `<h1 id="error">${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>`);
}
