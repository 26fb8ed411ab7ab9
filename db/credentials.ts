import type { RefreshPolicy, SecretEntry } from '../domain/credentials';
import { containsPattern, type Db } from './client';
import { keysetPage } from './kit/keyset';
import { onUnique } from './kit/unique';

type Json = Parameters<Db['json']>[0];

/** Metadata of a credential; the sealed value stays in the table and is read only by `getSealedValue`. */
export interface CredentialRow {
  id: string;
  org_id: string;
  name: string;
  description: string;
  refresher_workflow_id: string | null;
  refresh_input: Record<string, unknown>;
  refresh_policy: RefreshPolicy;
  has_value: boolean;
  value_keys: string[];
  secrets: SecretEntry[];
  expires_at: Date | null;
  last_refresh_status: string | null;
  last_refresh_at: Date | null;
  last_refresh_error: string | null;
  last_refresh_execution_id: string | null;
  refresh_locked_until: Date | null;
  is_refreshing: boolean;
  temporal_schedule_id: string | null;
  created_by: string;
  modified_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface SealedValue {
  key_id: string;
  ciphertext: string;
  secrets: SecretEntry[];
  expires_at: Date | null;
}

// Every column but the ciphertext, with the lock read against the database clock.
const columns = (db: Db) => db`
  id, org_id, name, description, refresher_workflow_id, refresh_input, refresh_policy,
  value_ciphertext IS NOT NULL AS has_value, value_keys, secrets, expires_at, last_refresh_status,
  last_refresh_at, last_refresh_error, last_refresh_execution_id,
  CASE WHEN refresh_locked_until > now() THEN refresh_locked_until END AS refresh_locked_until,
  coalesce(refresh_locked_until > now(), false) AS is_refreshing,
  temporal_schedule_id, created_by, modified_by, created_at, updated_at`;

export async function listCredentials(
  db: Db,
  orgId: string,
  filters: { name?: string },
  page: { limit: number; after?: { t: string; id: string } },
): Promise<{ rows: (CredentialRow & { cursor_t: string })[]; total: number }> {
  const matching =
    filters.name !== undefined ? db`org_id = ${orgId} AND name ILIKE ${containsPattern(filters.name)}` : db`org_id = ${orgId}`;
  return keysetPage<CredentialRow>(db, { select: columns(db), from: db`workflow_credentials`, where: matching, ...page });
}

export async function getCredential(
  db: Db,
  orgId: string,
  id: string,
  options: { lock?: boolean } = {},
): Promise<CredentialRow | undefined> {
  const lock = options.lock ? db`FOR UPDATE` : db``;
  const [row]: [CredentialRow?] = await db`SELECT ${columns(db)} FROM workflow_credentials WHERE org_id = ${orgId} AND id = ${id} ${lock}`;
  return row;
}

export interface CredentialFields {
  name: string;
  description: string;
  refresher_workflow_id: string | null;
  refresh_input: Record<string, unknown>;
  refresh_policy: RefreshPolicy;
  temporal_schedule_id: string | null;
}

const DUPLICATE_NAME = 'The organization already has a credential of that name';

export async function insertCredential(db: Db, orgId: string, id: string, fields: CredentialFields, actor: string): Promise<CredentialRow> {
  const [row] = await onUnique(
    db<CredentialRow[]>`
    INSERT INTO workflow_credentials (id, org_id, name, description, refresher_workflow_id, refresh_input, refresh_policy,
      temporal_schedule_id, created_by, modified_by)
    VALUES (${id}, ${orgId}, ${fields.name}, ${fields.description}, ${fields.refresher_workflow_id}, ${db.json(fields.refresh_input as Json)},
      ${db.json(fields.refresh_policy as unknown as Json)}, ${fields.temporal_schedule_id}, ${actor}, ${actor})
    RETURNING ${columns(db)}`,
    DUPLICATE_NAME,
  );
  return row!;
}

export async function updateCredential(db: Db, orgId: string, id: string, fields: CredentialFields, actor: string): Promise<CredentialRow> {
  const [row] = await onUnique(
    db<CredentialRow[]>`
    UPDATE workflow_credentials SET name = ${fields.name}, description = ${fields.description},
      refresher_workflow_id = ${fields.refresher_workflow_id}, refresh_input = ${db.json(fields.refresh_input as Json)},
      refresh_policy = ${db.json(fields.refresh_policy as unknown as Json)}, temporal_schedule_id = ${fields.temporal_schedule_id},
      modified_by = ${actor}, updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id} RETURNING ${columns(db)}`,
    DUPLICATE_NAME,
  );
  return row!;
}

export async function deleteCredential(db: Db, orgId: string, id: string): Promise<CredentialRow | undefined> {
  const [row]: [CredentialRow?] =
    await db`DELETE FROM workflow_credentials WHERE org_id = ${orgId} AND id = ${id} RETURNING ${columns(db)}`;
  return row;
}

export async function getSealedValue(db: Db, orgId: string, id: string): Promise<SealedValue | undefined> {
  const [row]: [SealedValue?] = await db`
    SELECT value_key_id AS key_id, value_ciphertext AS ciphertext, secrets, expires_at
    FROM workflow_credentials WHERE org_id = ${orgId} AND id = ${id} AND value_ciphertext IS NOT NULL`;
  return row;
}

export async function storeSealedValue(
  db: Db,
  orgId: string,
  id: string,
  sealed: { keyId: string; ciphertext: string; valueKeys: string[]; secrets: SecretEntry[]; expiresAt: Date | null },
  /** Null for a refresh: modified_by names users only. */
  actor: string | null,
): Promise<CredentialRow | undefined> {
  const [row]: [CredentialRow?] = await db`
    UPDATE workflow_credentials SET value_key_id = ${sealed.keyId}, value_ciphertext = ${sealed.ciphertext},
      value_keys = ${sealed.valueKeys}, secrets = ${db.json(sealed.secrets as unknown as Json)}, expires_at = ${sealed.expiresAt},
      modified_by = coalesce(${actor}, modified_by), updated_at = now()
    WHERE org_id = ${orgId} AND id = ${id} RETURNING ${columns(db)}`;
  return row;
}

/**
 * Takes the refresh lock for `holder` when nobody holds it (or the holder's time ran out); undefined
 * when another refresh holds it. Marks the credential as refreshing under this execution.
 */
export async function acquireRefreshLock(
  db: Db,
  orgId: string,
  id: string,
  holder: string,
  seconds: number,
): Promise<CredentialRow | undefined> {
  const [row]: [CredentialRow?] = await db`
    UPDATE workflow_credentials SET refresh_locked_until = now() + make_interval(secs => ${seconds}), refresh_lock_holder = ${holder},
      last_refresh_status = 'running', last_refresh_execution_id = ${holder}
    WHERE org_id = ${orgId} AND id = ${id}
      AND (refresh_locked_until IS NULL OR refresh_locked_until <= now() OR refresh_lock_holder = ${holder})
    RETURNING ${columns(db)}`;
  return row;
}

/** Records a refresh's end and releases the lock, if `holder` still holds it. */
export async function finishRefresh(
  db: Db,
  orgId: string,
  id: string,
  holder: string,
  outcome: { status: 'success' | 'failed'; error: string | null },
): Promise<boolean> {
  const rows = await db`
    UPDATE workflow_credentials SET refresh_locked_until = NULL, refresh_lock_holder = NULL,
      last_refresh_status = ${outcome.status}, last_refresh_error = ${outcome.error}, last_refresh_at = now(),
      last_refresh_execution_id = ${holder}
    WHERE org_id = ${orgId} AND id = ${id} AND refresh_lock_holder = ${holder}`;
  return rows.count > 0;
}

/** Forgets the last refresh's outcome (a reconnect with fresh tokens makes an old failure stale). */
export async function clearRefreshOutcome(db: Db, orgId: string, id: string): Promise<void> {
  await db`UPDATE workflow_credentials SET last_refresh_status = NULL, last_refresh_error = NULL WHERE org_id = ${orgId} AND id = ${id}`;
}

/** Organizations holding values sealed by a key other than `currentKeyId` (the rotation command's work list). */
export async function orgsWithOtherKeys(db: Db, currentKeyId: string): Promise<string[]> {
  const rows = await db<{ org_id: string }[]>`
    SELECT DISTINCT org_id FROM workflow_credentials WHERE value_key_id IS NOT NULL AND value_key_id <> ${currentKeyId}`;
  return rows.map((r) => r.org_id);
}

/** A batch of one organization's values sealed by another key, locked for re-sealing. */
export async function valuesWithOtherKeys(
  db: Db,
  orgId: string,
  currentKeyId: string,
  limit: number,
): Promise<{ id: string; key_id: string; ciphertext: string }[]> {
  return db<{ id: string; key_id: string; ciphertext: string }[]>`
    SELECT id, value_key_id AS key_id, value_ciphertext AS ciphertext FROM workflow_credentials
    WHERE org_id = ${orgId} AND value_key_id IS NOT NULL AND value_key_id <> ${currentKeyId}
    ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
}

export async function resealValue(db: Db, orgId: string, id: string, keyId: string, ciphertext: string): Promise<void> {
  await db`UPDATE workflow_credentials SET value_key_id = ${keyId}, value_ciphertext = ${ciphertext} WHERE org_id = ${orgId} AND id = ${id}`;
}
