import * as db from '../../db/webhooks';
import type { EndpointRow } from '../../db/webhooks';
import { invalid, notFound } from '../../domain/errors';
import { newId } from '../../platform/core/ids';
import type { ServiceDeps } from '../deps';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';
import { iso } from '../views';
import { newSecret, sealSecret } from './secrets';

// An organization's webhook endpoints: create (the secret shown once), read, change, delete, and
// rotate the secret (the previous one keeps signing for WEBHOOK_SECRET_OVERLAP_SECONDS).

export const endpointNotFound = () => notFound('Webhook endpoint not found');

export function endpointView(row: EndpointRow) {
  return {
    id: row.id,
    organization_id: row.org_id,
    url: row.url,
    description: row.description,
    event_types: row.event_types,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    disabled_at: iso(row.disabled_at),
    failing_since: iso(row.failing_since),
    last_success_at: iso(row.last_success_at),
    previous_secret_expires_at: iso(row.previous_secret_expires_at),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
    modified_by: row.modified_by,
  };
}

/** Types once each, in the order given; null (or absent) subscribes to every type. */
const subscription = (types: string[] | null | undefined): string[] | null => (types ? [...new Set(types)] : null);

export async function listEndpoints(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { enabled?: boolean; limit: number; cursor?: string },
) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const { rows, total } = await db.listEndpoints(deps.sql, orgId, { enabled: query.enabled }, { limit: query.limit, after });
  return cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }), endpointView);
}

export async function getEndpoint(deps: Pick<ServiceDeps, 'sql'>, orgId: string, id: string) {
  const row = await db.getEndpoint(deps.sql, orgId, id);
  if (!row) throw endpointNotFound();
  return endpointView(row);
}

export interface EndpointInput {
  url: string;
  description?: string;
  event_types?: string[] | null;
  enabled?: boolean;
}

/** Creates the endpoint; its signing secret is in this answer only. */
export async function createEndpoint(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, actor: string, input: EndpointInput) {
  const id = newId();
  const secret = newSecret();
  const row = await db.insertEndpoint(deps.sql, orgId, {
    id,
    url: input.url,
    description: input.description ?? '',
    event_types: subscription(input.event_types),
    enabled: input.enabled ?? true,
    secret: sealSecret(deps.config, orgId, id, secret),
    actor,
  });
  return { ...endpointView(row), secret };
}

/**
 * Changes what the body names. Enabling an endpoint again clears its failure streak and wakes its
 * actor for the deliveries that waited (at commit, through the relay); disabling stops its deliveries.
 */
export async function updateEndpoint(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  id: string,
  patch: Partial<EndpointInput>,
) {
  if (Object.keys(patch).length === 0) throw invalid('Empty patch body: send url, description, event_types or enabled');
  const { enabled, ...fields } = patch;
  const row = await deps.sql.begin(async (tx) => {
    const after = await db.updateEndpoint(
      tx,
      orgId,
      id,
      { ...fields, ...(fields.event_types !== undefined ? { event_types: subscription(fields.event_types) } : {}) },
      enabled,
      actor,
    );
    if (after?.enabled && enabled) await db.wakeEndpoint(tx, orgId, id);
    return after;
  });
  if (!row) throw endpointNotFound();
  return endpointView(row);
}

/** Deletes the endpoint with its deliveries and attempts; its actor ends at its next step. */
export async function deleteEndpoint(deps: Pick<ServiceDeps, 'sql'>, orgId: string, id: string): Promise<void> {
  if (!(await db.deleteEndpoint(deps.sql, orgId, id))) throw endpointNotFound();
}

/** A new secret signs from now on (shown in this answer only); the one it replaces signs too until the overlap ends. */
export async function rotateSecret(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, actor: string, id: string) {
  const secret = newSecret();
  const row = await db.rotateSecret(
    deps.sql,
    orgId,
    id,
    sealSecret(deps.config, orgId, id, secret),
    deps.config.WEBHOOK_SECRET_OVERLAP_SECONDS,
    actor,
  );
  if (!row) throw endpointNotFound();
  return { ...endpointView(row), secret };
}
