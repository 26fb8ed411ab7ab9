import * as credentials from '../../db/credentials';
import type { CredentialRow } from '../../db/credentials';
import { hasSchedule, type RefreshPolicy, type SecretEntry } from '../../domain/credentials';
import { isGrpcServiceError } from '@temporalio/client';
import { conflict, invalid, notFound } from '../../domain/errors';
import { newId } from '../../platform/core/ids';
import { findRefresher } from '../../platform/adapters/refreshers';
import { refreshScheduleId } from '../../workflows/credential-messages';
import type { ServiceDeps } from '../deps';
import { iso } from '../views';
import { createSchedule, deleteSchedule, reconcileSchedule } from './schedules';
import { writeValue, type Value } from './values';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';

// Workflow credentials: metadata CRUD and the typed-in value, with the refresh schedule kept in step
// with the row (./schedules.ts); the value is sealed by ./values.ts.

export const credentialNotFound = () => notFound('Credential not found');

export function credentialView(row: CredentialRow) {
  return {
    id: row.id,
    organization_id: row.org_id,
    name: row.name,
    description: row.description,
    refresher_workflow_id: row.refresher_workflow_id,
    refresh_input: row.refresh_input,
    refresh_policy: row.refresh_policy,
    has_value: row.has_value,
    value_keys: row.value_keys,
    expires_at: iso(row.expires_at),
    last_refresh_status: row.last_refresh_status as 'success' | 'failed' | 'running' | null,
    last_refresh_at: iso(row.last_refresh_at),
    last_refresh_error: row.last_refresh_error,
    last_refresh_execution_id: row.last_refresh_execution_id,
    refresh_locked_until: iso(row.refresh_locked_until),
    is_refreshing: row.is_refreshing,
    temporal_schedule_id: row.temporal_schedule_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
    modified_by: row.modified_by,
    secrets: row.secrets,
  };
}

export async function listCredentials(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { name?: string; limit: number; cursor?: string },
) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const { rows, total } = await credentials.listCredentials(deps.sql, orgId, { name: query.name }, { limit: query.limit, after });
  return cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }), credentialView);
}

export async function getCredential(deps: Pick<ServiceDeps, 'sql'>, orgId: string, id: string) {
  const row = await credentials.getCredential(deps.sql, orgId, id);
  if (!row) throw credentialNotFound();
  return credentialView(row);
}

export interface CredentialInput {
  name: string;
  description?: string;
  refresher_workflow_id?: string | null;
  refresh_input?: Value;
  refresh_policy?: RefreshPolicy;
  /** The initial material (typed-in values, or a refresher's secrets such as a client secret). */
  value?: Value;
  expires_at?: string | null;
}

/** Refresher, its input and the policy must fit together; returns the checked fields. */
function checkRefreshFields(fields: credentials.CredentialFields): credentials.CredentialFields {
  if (fields.refresher_workflow_id) {
    const refresher = findRefresher(fields.refresher_workflow_id);
    if (!refresher) throw notFound('Refresher not found');
    const parsed = refresher.inputSchema.safeParse(fields.refresh_input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw invalid(`refresh_input${issue.path.map((p) => `.${String(p)}`).join('')}: ${issue.message}`);
    }
    return { ...fields, refresh_input: parsed.data as Value };
  }
  if (hasSchedule(fields.refresh_policy)) throw invalid(`refresh_policy ${fields.refresh_policy.type} needs a refresher_workflow_id`);
  if (Object.keys(fields.refresh_input).length > 0) throw invalid('refresh_input needs a refresher_workflow_id');
  return fields;
}

function translateWrite(error: unknown): never {
  // Temporal refuses a schedule it cannot parse (a cron expression, a time zone) as INVALID_ARGUMENT.
  if (
    isGrpcServiceError((error as { cause?: unknown }).cause ?? error) &&
    ((error as { cause?: { code?: number } }).cause ?? (error as { code?: number })).code === 3
  )
    throw invalid(`refresh_policy: ${(error as Error).message}`);
  throw error;
}

export async function createCredential(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  orgId: string,
  actor: string,
  input: CredentialInput,
) {
  const id = newId();
  const policy = input.refresh_policy ?? { type: 'manual' };
  const fields = checkRefreshFields({
    name: input.name,
    description: input.description ?? '',
    refresher_workflow_id: input.refresher_workflow_id ?? null,
    refresh_input: input.refresh_input ?? {},
    refresh_policy: policy,
    temporal_schedule_id: hasSchedule(policy) ? refreshScheduleId(id) : null,
  });
  let scheduled = false;
  try {
    // Row, value and schedule in one transaction: a schedule Temporal refuses rolls the row back.
    const row = await deps.sql.begin(async (tx) => {
      let row = await credentials.insertCredential(tx, orgId, id, fields, actor);
      if (input.value)
        row = await writeValue(tx, deps.config, orgId, id, input.value, input.expires_at ?? null, { source: 'input', actor, merge: false });
      if (hasSchedule(fields.refresh_policy)) {
        await createSchedule(deps, orgId, id, fields.refresh_policy);
        scheduled = true;
      }
      return row;
    });
    return credentialView(row);
  } catch (error) {
    if (scheduled) await deleteSchedule(deps, id);
    translateWrite(error);
  }
}

export type CredentialPatch = Partial<Omit<CredentialInput, 'value' | 'expires_at'>>;

export async function updateCredential(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  orgId: string,
  actor: string,
  id: string,
  patch: CredentialPatch,
) {
  try {
    const row = await deps.sql.begin(async (tx) => {
      const before = await credentials.getCredential(tx, orgId, id, { lock: true });
      if (!before) throw credentialNotFound();
      const refresherChanged = patch.refresher_workflow_id !== undefined && patch.refresher_workflow_id !== before.refresher_workflow_id;
      const policy = patch.refresh_policy ?? before.refresh_policy;
      const fields = checkRefreshFields({
        name: patch.name ?? before.name,
        description: patch.description ?? before.description,
        refresher_workflow_id: patch.refresher_workflow_id === undefined ? before.refresher_workflow_id : patch.refresher_workflow_id,
        // Another refresher takes another input: the old one is not carried over.
        refresh_input: patch.refresh_input ?? (refresherChanged ? {} : before.refresh_input),
        refresh_policy: policy,
        temporal_schedule_id: hasSchedule(policy) ? refreshScheduleId(id) : null,
      });
      const after = await credentials.updateCredential(tx, orgId, id, fields, actor);
      await reconcileSchedule(deps, orgId, id, before.refresh_policy, fields.refresh_policy);
      return after;
    });
    return credentialView(row);
  } catch (error) {
    translateWrite(error);
  }
}

export async function deleteCredential(deps: Pick<ServiceDeps, 'sql' | 'temporal'>, orgId: string, id: string): Promise<void> {
  await deps.sql.begin(async (tx) => {
    const row = await credentials.deleteCredential(tx, orgId, id);
    if (!row) throw credentialNotFound();
    // Inside the transaction: when Temporal cannot be reached the row stays, and the caller retries.
    if (hasSchedule(row.refresh_policy)) await deleteSchedule(deps, id);
  });
}

/** `PUT .../value`: the typed-in material of a credential without a refresher (409 otherwise). */
export async function putCredentialValue(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  actor: string,
  id: string,
  value: Value,
  expiresAt: string | null,
) {
  const row = await deps.sql.begin(async (tx) => {
    const current = await credentials.getCredential(tx, orgId, id, { lock: true });
    if (!current) throw credentialNotFound();
    if (current.refresher_workflow_id) throw conflict('The credential has a refresher; its value is set by refreshing');
    return writeValue(tx, deps.config, orgId, id, value, expiresAt, { source: 'input', actor, merge: false });
  });
  return credentialView(row);
}

/**
 * Sets a credential's value whatever its refresher (for other services, e.g. integrations storing the
 * tokens of a connection). `merge` keeps the keys the new value does not name.
 */
export async function setCredentialValue(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  id: string,
  value: Value,
  expiresAt: string | null,
  options: { source: SecretEntry['source']; actor: string; merge: boolean },
) {
  const row = await deps.sql.begin(async (tx) => {
    if (!(await credentials.getCredential(tx, orgId, id, { lock: true }))) throw credentialNotFound();
    return writeValue(tx, deps.config, orgId, id, value, expiresAt, options);
  });
  return credentialView(row);
}
