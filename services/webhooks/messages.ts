import * as deliveries from '../../db/webhook-deliveries';
import type { AttemptRow, DeliveryRow, DeliveryStatus } from '../../db/webhook-deliveries';
import * as db from '../../db/webhooks';
import type { MessageRow } from '../../db/webhooks';
import { conflict, notFound } from '../../domain/errors';
import { MESSAGE_ID_PATTERN, WEBHOOK_EVENT_TYPES, messageIdFrom, uuidFromMessageId } from '../../domain/webhooks';
import type { ServiceDeps } from '../deps';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';
import { iso } from '../views';
import { endpointNotFound } from './endpoints';

// What was sent: the event type catalog, messages, each endpoint's deliveries and every attempt, and
// resending a message (a fresh schedule, due now, woken at commit through the relay).

export const messageNotFound = () => notFound('Webhook message not found');

export const eventTypes = () => ({ data: WEBHOOK_EVENT_TYPES.map((e) => ({ ...e })) });

const messageView = (row: MessageRow) => ({
  id: messageIdFrom(row.id),
  event_type: row.event_type,
  timestamp: row.created_at.toISOString(),
  data: row.payload,
});

const deliveryView = (row: DeliveryRow) => ({
  endpoint_id: row.endpoint_id,
  message_id: messageIdFrom(row.message_id),
  status: row.status,
  attempts: row.attempts,
  next_attempt_at: iso(row.next_attempt_at),
  last_attempt_at: iso(row.last_attempt_at),
  last_status_code: row.last_status_code,
  created_at: row.created_at.toISOString(),
});

const attemptView = (row: AttemptRow) => ({
  id: row.id,
  endpoint_id: row.endpoint_id,
  message_id: messageIdFrom(row.message_id),
  url: row.url,
  trigger: row.trigger,
  status: row.status,
  response_status_code: row.response_status_code,
  response_body: row.response_body,
  error: row.error,
  latency_ms: row.latency_ms,
  created_at: row.created_at.toISOString(),
});

/** The uuid of a message id the route's pattern admitted. */
const messageUuid = (id: string): string => {
  if (!MESSAGE_ID_PATTERN.test(id)) throw messageNotFound();
  return uuidFromMessageId(id);
};

interface Page {
  limit: number;
  cursor?: string;
}

export async function listMessages(deps: Pick<ServiceDeps, 'sql'>, orgId: string, query: Page & { event_type?: string }) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const { rows, total } = await db.listMessages(deps.sql, orgId, { event_type: query.event_type }, { limit: query.limit, after });
  return cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }), messageView);
}

/** A message with its delivery to each endpoint it went to. */
export async function getMessage(deps: Pick<ServiceDeps, 'sql'>, orgId: string, messageId: string) {
  const id = messageUuid(messageId);
  const row = await db.getMessage(deps.sql, orgId, id);
  if (!row) throw messageNotFound();
  const sent = await deliveries.messageDeliveries(deps.sql, orgId, id);
  return { ...messageView(row), deliveries: sent.map((d) => ({ ...deliveryView(d), url: d.url })) };
}

/** The messages that went to an endpoint, newest first, with their delivery to it. */
export async function listEndpointMessages(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  endpointId: string,
  query: Page & { status?: DeliveryStatus },
) {
  if (!(await db.getEndpoint(deps.sql, orgId, endpointId))) throw endpointNotFound();
  const after = decodeCursor(query.cursor, CreatedCursor);
  const { rows, total } = await deliveries.endpointDeliveries(
    deps.sql,
    orgId,
    endpointId,
    { status: query.status },
    { limit: query.limit, after },
  );
  return cursorPage(
    rows,
    query.limit,
    total,
    (last) => ({ t: last.cursor_t, id: last.message_id }),
    (row) => ({ ...deliveryView(row), event_type: row.event_type }),
  );
}

type AttemptQuery = Page & { status?: 'succeeded' | 'failed' };

/** An endpoint's attempts, newest first (of one message when `message_id` is given). */
export async function listEndpointAttempts(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  endpointId: string,
  query: AttemptQuery & { message_id?: string },
) {
  if (!(await db.getEndpoint(deps.sql, orgId, endpointId))) throw endpointNotFound();
  const messageId = query.message_id === undefined ? undefined : messageUuid(query.message_id);
  return attempts(deps, orgId, { endpoint_id: endpointId, message_id: messageId, status: query.status }, query);
}

/** A message's attempts, newest first (to one endpoint when `endpoint_id` is given). */
export async function listMessageAttempts(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  messageId: string,
  query: AttemptQuery & { endpoint_id?: string },
) {
  const id = messageUuid(messageId);
  if (!(await db.getMessage(deps.sql, orgId, id))) throw messageNotFound();
  return attempts(deps, orgId, { message_id: id, endpoint_id: query.endpoint_id, status: query.status }, query);
}

async function attempts(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  filters: { endpoint_id?: string; message_id?: string; status?: 'succeeded' | 'failed' },
  page: Page,
) {
  const after = decodeCursor(page.cursor, CreatedCursor);
  const { rows, total } = await deliveries.listAttempts(deps.sql, orgId, filters, { limit: page.limit, after });
  return cursorPage(rows, page.limit, total, (last) => ({ t: last.cursor_t, id: last.id }), attemptView);
}

/** Sends the message again to one endpoint, whatever became of it there: 404 if it never went there, 409 if the endpoint is disabled. */
export async function resendToEndpoint(deps: Pick<ServiceDeps, 'sql'>, orgId: string, endpointId: string, messageId: string) {
  const id = messageUuid(messageId);
  return deps.sql.begin(async (tx) => {
    const endpoint = await db.getEndpoint(tx, orgId, endpointId, { lock: true });
    if (!endpoint) throw endpointNotFound();
    if (!endpoint.enabled) throw conflict('The webhook endpoint is disabled: enable it before resending');
    if (!(await deliveries.requeueDeliveries(tx, orgId, id, { endpointId })).length) throw messageNotFound();
    const [delivery] = (await deliveries.messageDeliveries(tx, orgId, id)).filter((d) => d.endpoint_id === endpointId);
    return { ...deliveryView(delivery!), url: delivery!.url };
  });
}

/** Sends the message again to every enabled endpoint whose delivery of it failed for good; the endpoints it goes to. */
export async function resendFailed(deps: Pick<ServiceDeps, 'sql'>, orgId: string, messageId: string) {
  const id = messageUuid(messageId);
  return deps.sql.begin(async (tx) => {
    if (!(await db.getMessage(tx, orgId, id))) throw messageNotFound();
    const endpoints = await deliveries.requeueDeliveries(tx, orgId, id, 'failed');
    return { message_id: messageIdFrom(id), endpoint_ids: endpoints };
  });
}
