import { performance } from 'node:perf_hooks';
import type { Db } from '../../db/client';
import { membersByExternalIds } from '../../db/notifications';
import * as deliveries from '../../db/webhook-deliveries';
import type { AttemptRecord, DueDelivery } from '../../db/webhook-deliveries';
import * as db from '../../db/webhooks';
import type { EndpointRow } from '../../db/webhooks';
import { RESPONSE_KEPT_BYTES, type WebhookBody, failedLongEnough, isDelivered, messageIdFrom, retryDelayMs } from '../../domain/webhooks';
import { newId } from '../../platform/core/ids';
import { guardedRequest } from '../../platform/adapters/web/guarded-http';
import type { Config } from '../../platform/core/config';
import type { ServiceDeps } from '../deps';
import { emitEvent } from '../notifications/emit';
import { openSecrets, signatureHeader } from './secrets';

// One step of an endpoint's actor (workflows/webhooks.ts): claim its due deliveries, send each one signed
// through the guarded HTTP client (public addresses only, one deadline, the answer's first bytes kept), and
// record every attempt and what it made of its delivery: delivered, due again on the retry schedule, or
// failed for good. An endpoint that has failed every attempt for WEBHOOK_DISABLE_AFTER_SECONDS is disabled
// and the organization notified, in the transaction that records the attempt that crossed the line.

type DeliveryConfig = Pick<
  Config,
  | 'WEBHOOK_RETRY_DELAYS_SECONDS'
  | 'WEBHOOK_DISABLE_AFTER_SECONDS'
  | 'WEBHOOK_TIMEOUT_MS'
  | 'WEBHOOK_ENDPOINT_CONCURRENCY'
  | 'WEBHOOK_BATCH_SIZE'
  | 'WEB_FETCH_ALLOW_PRIVATE'
  | 'ENCRYPTION_KEY'
  | 'ENCRYPTION_KEYS_PREVIOUS'
  | 'dataDir'
>;

export interface DeliveryStep {
  /** `gone`: deleted; `disabled`: off (by a person, or here for failing): the actor ends either way. */
  state: 'active' | 'disabled' | 'gone';
  delivered: number;
  failed: number;
  /** A full batch was claimed: more may be due now. */
  more: boolean;
  /** Milliseconds until the next pending delivery falls due; null when none is pending. */
  nextDueInMs: number | null;
}

/** How long one step may take at most: its batch sent in waves of the endpoint's concurrency, plus the recording. */
export function stepBoundMs(
  config: Pick<DeliveryConfig, 'WEBHOOK_BATCH_SIZE' | 'WEBHOOK_ENDPOINT_CONCURRENCY' | 'WEBHOOK_TIMEOUT_MS'>,
): number {
  return Math.ceil(config.WEBHOOK_BATCH_SIZE / config.WEBHOOK_ENDPOINT_CONCURRENCY) * config.WEBHOOK_TIMEOUT_MS + 30_000;
}

const USER_AGENT = 'voice-crm-webhooks/1.0';

/** The body of a message, the same bytes on every attempt. */
export const messageBody = (d: Pick<DueDelivery, 'message_id' | 'event_type' | 'payload' | 'message_created_at'>): string =>
  JSON.stringify({
    id: messageIdFrom(d.message_id),
    type: d.event_type,
    timestamp: d.message_created_at.toISOString(),
    data: d.payload,
  } satisfies WebhookBody);

interface Sent {
  at: Date;
  latencyMs: number;
  status: number | null;
  body: string;
  error: string | null;
}

async function send(config: DeliveryConfig, url: string, secrets: string[], d: DueDelivery): Promise<Sent> {
  const id = messageIdFrom(d.message_id);
  const body = messageBody(d);
  const at = new Date();
  // Signed at each attempt: receivers refuse timestamps far from their clock (Standard Webhooks: 5 minutes).
  const timestamp = Math.floor(at.getTime() / 1000);
  const started = performance.now();
  try {
    const response = await guardedRequest(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': USER_AGENT,
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secrets, id, timestamp, body),
      },
      body,
      allowPrivate: config.WEB_FETCH_ALLOW_PRIVATE,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      maxBytes: RESPONSE_KEPT_BYTES,
      oversize: 'truncate',
      wording: 'call',
    });
    const text = response.body.toString('utf8').replaceAll('\u0000', '');
    return { at, latencyMs: Math.round(performance.now() - started), status: response.status, body: text, error: null };
  } catch (error) {
    return {
      at,
      latencyMs: Math.round(performance.now() - started),
      status: null,
      body: '',
      error: (error as Error).message.slice(0, 500),
    };
  }
}

function attemptRecord(config: DeliveryConfig, url: string, d: DueDelivery, sent: Sent): AttemptRecord {
  const ok = sent.status !== null && isDelivered(sent.status);
  const delay = ok ? null : retryDelayMs(config.WEBHOOK_RETRY_DELAYS_SECONDS, d.attempts + 1);
  return {
    id: newId(),
    message_id: d.message_id,
    trigger: d.manual ? 'manual' : 'scheduled',
    status: ok ? 'succeeded' : 'failed',
    response_status_code: sent.status,
    response_body: sent.body,
    error: sent.error ?? (ok ? null : `HTTP ${sent.status}`),
    latency_ms: sent.latencyMs,
    url,
    created_at: sent.at,
    delivery_status: ok ? 'succeeded' : delay === null ? 'failed' : 'pending',
    next_attempt_at: delay === null ? null : new Date(Date.now() + delay),
  };
}

async function eachLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** Disables the endpoint for failing and tells the organization (its creator, and the admins of always-send alerts). */
async function disableForFailing(tx: Db, orgId: string, endpoint: EndpointRow, failingSince: Date): Promise<boolean> {
  const disabled = await db.disableFailingEndpoint(tx, orgId, endpoint.id);
  if (!disabled) return false;
  const creator = endpoint.created_by.startsWith('user:') ? endpoint.created_by.slice('user:'.length) : null;
  const members = creator ? await membersByExternalIds(tx, orgId, [creator]) : [];
  await emitEvent(tx, orgId, {
    event_type: 'webhook_endpoint.disabled',
    entity_type: 'webhook_endpoint',
    entity_id: endpoint.id,
    payload: {
      endpoint_id: endpoint.id,
      url: endpoint.url,
      failing_since: failingSince.toISOString(),
      reason: `Every delivery attempt to ${endpoint.url} failed since ${failingSince.toISOString()}; the endpoint was disabled. Its messages wait until it is enabled again (PATCH /webhooks/endpoints/${endpoint.id} with enabled true).`,
    },
    recipient_user_ids: members.map((m) => m.user_id),
  });
  return true;
}

/** One step of the endpoint's actor: a batch of its due deliveries, attempted and recorded. */
export async function deliverDue(
  deps: Pick<ServiceDeps, 'sql'> & { config: DeliveryConfig },
  orgId: string,
  endpointId: string,
): Promise<DeliveryStep> {
  const { sql, config } = deps;
  const endpoint = await db.getEndpoint(sql, orgId, endpointId);
  if (!endpoint) return { state: 'gone', delivered: 0, failed: 0, more: false, nextDueInMs: null };
  if (!endpoint.enabled) return { state: 'disabled', delivered: 0, failed: 0, more: false, nextDueInMs: null };
  // Opened before anything is claimed: a secret that cannot be opened leaves the deliveries as they were.
  const sealed = await db.getSealedSecrets(sql, orgId, endpointId);
  if (!sealed) return { state: 'gone', delivered: 0, failed: 0, more: false, nextDueInMs: null };
  const secrets = openSecrets(config, orgId, endpointId, sealed);
  const leaseSeconds = Math.ceil(stepBoundMs(config) / 1000);
  const due = await deliveries.claimDue(sql, orgId, endpointId, config.WEBHOOK_BATCH_SIZE, leaseSeconds);
  if (due.length === 0)
    return { state: 'active', delivered: 0, failed: 0, more: false, nextDueInMs: await deliveries.nextDueInMs(sql, orgId, endpointId) };

  // In the order they fell due, at most WEBHOOK_ENDPOINT_CONCURRENCY in flight.
  const sent = await eachLimited(due, config.WEBHOOK_ENDPOINT_CONCURRENCY, (d) => send(config, endpoint.url, secrets, d));
  const records = due.map((d, i) => attemptRecord(config, endpoint.url, d, sent[i]!));
  const delivered = records.filter((r) => r.status === 'succeeded').length;

  const state = await sql.begin(async (tx) => {
    // The endpoint may have been deleted or changed while the batch was out.
    const current = await db.getEndpoint(tx, orgId, endpointId, { lock: true });
    if (!current) return 'gone' as const;
    await deliveries.recordAttempts(tx, orgId, endpointId, records);
    const successes = records.filter((r) => r.status === 'succeeded');
    const failingSince = await db.recordEndpointOutcome(tx, orgId, endpointId, {
      lastSuccessAt: successes.length ? successes[successes.length - 1]!.created_at : null,
      firstFailureAt: records[0]!.created_at,
    });
    if (current.enabled && failingSince && failedLongEnough(failingSince, new Date(), config.WEBHOOK_DISABLE_AFTER_SECONDS)) {
      await disableForFailing(tx, orgId, current, failingSince);
      return 'disabled' as const;
    }
    return current.enabled ? ('active' as const) : ('disabled' as const);
  });
  const more = due.length === config.WEBHOOK_BATCH_SIZE;
  return {
    state,
    delivered,
    failed: records.length - delivered,
    more,
    nextDueInMs: state === 'active' && !more ? await deliveries.nextDueInMs(sql, orgId, endpointId) : null,
  };
}
