import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { Config } from '../../core/config';

// Signed capture webhooks (Standard Webhooks), shared by the meeting vendors and the webhook route.

/** The signing secrets accepted on the capture webhook, newest first (rotation: old ones stay listed for a while). */
export function webhookSecrets(config: Pick<Config, 'MEETING_WEBHOOK_SECRETS'>): string[] {
  return (config.MEETING_WEBHOOK_SECRETS ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A header value by either naming: Standard Webhooks (`webhook-*`) or Svix (`svix-*`), which Recall.ai sends. */
function signatureHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const get = (name: string): string => {
    const value = headers[`webhook-${name}`] ?? headers[`svix-${name}`];
    return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
  };
  return { 'webhook-id': get('id'), 'webhook-timestamp': get('timestamp'), 'webhook-signature': get('signature') };
}

/** Standard Webhooks' timestamp tolerance, both ways (the standardwebhooks library fixes the same). */
const TOLERANCE_SECONDS = 5 * 60;

/**
 * True when the message names an id, a signature and a timestamp within tolerance: what a webhook route
 * checks before it reads the body, so a caller without them never has its body read.
 */
export function hasSignatureHeaders(headers: Record<string, string | string[] | undefined>, now = Date.now()): boolean {
  const h = signatureHeaders(headers);
  if (!h['webhook-id'] || !h['webhook-signature'] || !/^\d{1,12}$/.test(h['webhook-timestamp']!)) return false;
  return Math.abs(Math.floor(now / 1000) - Number(h['webhook-timestamp'])) <= TOLERANCE_SECONDS;
}

/**
 * Verifies a capture webhook against every configured secret (five minutes of timestamp tolerance, as
 * the standardwebhooks library fixes it). Returns the message id, or null when no secret verifies it.
 */
export function verifyWebhook(secrets: string[], rawBody: string, headers: Record<string, string | string[] | undefined>): string | null {
  const normalized = signatureHeaders(headers);
  for (const secret of secrets) {
    try {
      new Webhook(secret).verify(rawBody, normalized, { jsonParse: false });
      return normalized['webhook-id']!;
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
    }
  }
  return null;
}

/** Standard Webhooks headers for one message (what the simulated vendor and tests send). */
export function signWebhook(secret: string, id: string, body: string, at = new Date()): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}
