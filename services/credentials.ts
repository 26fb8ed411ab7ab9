import { ScheduleNotFoundError, ScheduleOverlapPolicy, isGrpcServiceError, type Client, type ScheduleSpec } from '@temporalio/client';
import type { Db } from '../db/client';
import * as credentials from '../db/credentials';
import type { CredentialRow } from '../db/credentials';
import {
  REFRESH_LOCK_SECONDS,
  describeSecrets,
  expiryCheckSeconds,
  hasSchedule,
  isDue,
  isPaused,
  refreshScheduleId,
  refreshWorkflowId,
  type RefreshOutcome,
  type RefreshPolicy,
  type RefreshRunInput,
  type SecretEntry,
} from '../domain/credentials';
import { conflict, invalid, notFound } from '../domain/errors';
import type { Config } from '../platform/config';
import { newId } from '../platform/ids';
import { redactSecrets, stringsIn } from '../platform/redact';
import { RefreshError, createSafeHttp, findRefresher, listRefreshers } from '../platform/refreshers';
import { keyringFor, loadMasterKey, open, parsePreviousKeys, seal, type Keyring } from '../platform/secrets';
import { organizationAttribute } from '../platform/temporal';
import type { ServiceDeps } from './deps';
import { emitEvent } from './notifications';
import { iso } from './views';

// Workflow credentials: metadata CRUD, the write-only value (sealed with AES-256-GCM under a key id),
// refresh schedules kept in step with the row, and the refresh run the workflow's activities call.

const credentialNotFound = () => notFound('Credential not found');
type Value = Record<string, unknown>;

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

export const refresherView = (r: { id: string; kind: string; name: string; description: string }) => ({
  id: r.id,
  kind: r.kind,
  name: r.name,
  description: r.description,
});

const keyrings = new Map<string, Keyring>();

/** The keyring that seals credential values: a subkey of ENCRYPTION_KEY, plus those of ENCRYPTION_KEYS_PREVIOUS. */
export function credentialKeyring(config: Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>): Keyring {
  const cacheKey = `${config.dataDir}|${config.ENCRYPTION_KEY ?? ''}|${config.ENCRYPTION_KEYS_PREVIOUS ?? ''}`;
  let ring = keyrings.get(cacheKey);
  if (!ring) {
    ring = keyringFor(
      'credential-values',
      loadMasterKey(config.ENCRYPTION_KEY, config.dataDir),
      parsePreviousKeys(config.ENCRYPTION_KEYS_PREVIOUS),
    );
    keyrings.set(cacheKey, ring);
  }
  return ring;
}

/** The associated data of a sealed value: the ciphertext opens only on its own row. */
export const sealedFor = (orgId: string, credentialId: string) => `workflow-credential:${orgId}:${credentialId}`;

export function listRefresherViews() {
  return { data: listRefreshers().map(refresherView) };
}

export async function listCredentials(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { name?: string; limit: number; after?: { t: string; id: string } },
) {
  return credentials.listCredentials(deps.sql, orgId, { name: query.name }, { limit: query.limit, after: query.after });
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

type ScheduleDeps = Pick<ServiceDeps, 'temporal' | 'config'>;

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
    if (scheduled) await deleteSchedule(deps.temporal, id);
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
    if (hasSchedule(row.refresh_policy)) await deleteSchedule(deps.temporal, id);
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

/** The decrypted value, for activities only: it must never reach a response, a log line or a workflow history. */
export async function readCredentialValue(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, id: string): Promise<Value | null> {
  return readValue(deps.sql, deps.config, orgId, id);
}

async function readValue(db: Db, config: ServiceDeps['config'], orgId: string, id: string): Promise<Value | null> {
  const sealed = await credentials.getSealedValue(db, orgId, id);
  if (!sealed) return null;
  return JSON.parse(open(credentialKeyring(config), sealed.key_id, sealed.ciphertext, sealedFor(orgId, id))) as Value;
}

/** Seals and stores a value on a row the caller has locked; `secrets` keeps the entries of unchanged keys. */
async function writeValue(
  tx: Db,
  config: ServiceDeps['config'],
  orgId: string,
  id: string,
  value: Value,
  expiresAt: string | Date | null,
  options: { source: SecretEntry['source']; actor: string | null; merge: boolean },
): Promise<CredentialRow> {
  const sealedBefore = await credentials.getSealedValue(tx, orgId, id);
  const before = sealedBefore
    ? (JSON.parse(open(credentialKeyring(config), sealedBefore.key_id, sealedBefore.ciphertext, sealedFor(orgId, id))) as Value)
    : {};
  const next = options.merge ? { ...before, ...value } : value;
  const written = Object.keys(value).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(value[k]));
  const secrets = describeSecrets(next, written, options.source, new Date(), sealedBefore?.secrets ?? []);
  const sealed = seal(credentialKeyring(config), JSON.stringify(next), sealedFor(orgId, id));
  const row = await credentials.storeSealedValue(
    tx,
    orgId,
    id,
    {
      keyId: sealed.keyId,
      ciphertext: sealed.ciphertext,
      valueKeys: Object.keys(next).sort(),
      secrets,
      expiresAt: expiresAt === null ? null : new Date(expiresAt),
    },
    options.actor,
  );
  return row!;
}

// --- Schedules -------------------------------------------------------------------------------------

function scheduleSpec(policy: RefreshPolicy): ScheduleSpec {
  switch (policy.type) {
    case 'interval':
      return { intervals: [{ every: `${policy.every_seconds}s` }] };
    case 'cron':
      return { cronExpressions: [policy.expression], timezone: policy.timezone };
    case 'before_expiry':
      return { intervals: [{ every: `${expiryCheckSeconds(policy)}s` }] };
    case 'manual':
      throw new Error('a manual policy has no schedule');
  }
}

function scheduleAction(deps: ScheduleDeps, orgId: string, credentialId: string) {
  const input: RefreshRunInput = { orgId, credentialId, trigger: 'schedule' };
  return {
    type: 'startWorkflow' as const,
    workflowType: 'credentialRefresh',
    workflowId: refreshWorkflowId(credentialId),
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    args: [input],
    typedSearchAttributes: organizationAttribute(orgId),
    workflowExecutionTimeout: '10 minutes',
  };
}

const note = (policy: RefreshPolicy) => (isPaused(policy) ? 'Paused through the credential' : undefined);

async function createSchedule(deps: ScheduleDeps, orgId: string, credentialId: string, policy: RefreshPolicy): Promise<void> {
  await deps.temporal.schedule.create({
    scheduleId: refreshScheduleId(credentialId),
    spec: scheduleSpec(policy),
    action: scheduleAction(deps, orgId, credentialId),
    // A run still refreshing when the next is due makes that next one a no-op.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute', pauseOnFailure: false },
    state: { paused: isPaused(policy), note: note(policy) },
    typedSearchAttributes: organizationAttribute(orgId),
  });
}

async function deleteSchedule(temporal: Client, credentialId: string): Promise<void> {
  try {
    await temporal.schedule.getHandle(refreshScheduleId(credentialId)).delete();
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
  }
}

/** Brings the credential's schedule in line with its new policy: created, updated (and paused) or deleted. */
async function reconcileSchedule(
  deps: ScheduleDeps,
  orgId: string,
  credentialId: string,
  before: RefreshPolicy,
  after: RefreshPolicy,
): Promise<void> {
  if (!hasSchedule(after)) {
    if (hasSchedule(before)) await deleteSchedule(deps.temporal, credentialId);
    return;
  }
  const handle = deps.temporal.schedule.getHandle(refreshScheduleId(credentialId));
  try {
    await handle.update((previous) => ({
      ...previous,
      spec: scheduleSpec(after),
      action: scheduleAction(deps, orgId, credentialId),
      policies: { ...previous.policies, overlap: ScheduleOverlapPolicy.SKIP },
      state: { ...previous.state, paused: isPaused(after), note: note(after) },
    }));
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
    await createSchedule(deps, orgId, credentialId, after);
  }
}

// --- Refresh ---------------------------------------------------------------------------------------

/** An error text safe to store and show: every form of every secret removed, cut to 500 characters. */
const safeErrorText = (message: string, secrets: readonly string[]) => redactSecrets(message, secrets).slice(0, 500);

/** `POST .../refresh`: starts a refresh now, or returns the one already running. */
export async function triggerRefresh(deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>, orgId: string, id: string) {
  const row = await credentials.getCredential(deps.sql, orgId, id);
  if (!row) throw credentialNotFound();
  if (!row.refresher_workflow_id) throw conflict('The credential has no refresher');
  const input: RefreshRunInput = { orgId, credentialId: id, trigger: 'manual' };
  const handle = await deps.temporal.workflow.start('credentialRefresh', {
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    workflowId: refreshWorkflowId(id),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [input],
    typedSearchAttributes: organizationAttribute(orgId),
    workflowExecutionTimeout: '10 minutes',
  });
  return { credential_id: id, workflow_id: handle.workflowId, execution_id: handle.firstExecutionRunId };
}

export type LockOutcome = 'acquired' | 'locked' | 'not_due' | 'missing' | 'no_refresher';

/** Takes the refresh lock for one execution; a before-expiry schedule run also checks that a refresh is due. */
export async function beginRefresh(deps: Pick<ServiceDeps, 'sql'>, input: RefreshRunInput, executionId: string): Promise<LockOutcome> {
  return deps.sql.begin(async (tx) => {
    const row = await credentials.getCredential(tx, input.orgId, input.credentialId, { lock: true });
    if (!row) return 'missing';
    if (!row.refresher_workflow_id) return 'no_refresher';
    if (input.trigger === 'schedule' && !isDue(row.refresh_policy, row.expires_at, new Date())) return 'not_due';
    const locked = await credentials.acquireRefreshLock(tx, input.orgId, input.credentialId, executionId, REFRESH_LOCK_SECONDS);
    return locked ? 'acquired' : 'locked';
  });
}

/**
 * Runs the credential's refresher through the safe fetcher and, on success, stores the new value and
 * expiry, records the success and releases the lock in one transaction. A failure throws RefreshError.
 */
export async function runRefresh(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  id: string,
  executionId: string,
): Promise<Extract<RefreshOutcome, { status: 'success' }>> {
  const row = await credentials.getCredential(deps.sql, orgId, id);
  if (!row || !row.refresher_workflow_id) throw new RefreshError('The credential or its refresher is gone', false);
  const refresher = findRefresher(row.refresher_workflow_id);
  if (!refresher) throw new RefreshError(`Unknown refresher ${row.refresher_workflow_id}`, false);
  const value = (await readValue(deps.sql, deps.config, orgId, id)) ?? {};
  const http = createSafeHttp({ allowPrivate: deps.config.WEB_FETCH_ALLOW_PRIVATE, timeoutMs: deps.config.CREDENTIAL_REFRESH_TIMEOUT_MS });
  let result;
  try {
    result = await refresher.refresh({ input: row.refresh_input, value, now: new Date(), http });
  } catch (error) {
    // The error text goes to the row, the workflow history, the notification and logs: none of the
    // value's strings may survive in it, in any encoding.
    const secrets = stringsIn(value);
    if (error instanceof RefreshError) throw new RefreshError(safeErrorText(error.message, secrets), error.retryable);
    throw new RefreshError(safeErrorText(`Refresher failed: ${(error as Error).message}`, secrets), true);
  }
  await deps.sql.begin(async (tx) => {
    if (!(await credentials.getCredential(tx, orgId, id, { lock: true }))) return;
    await writeValue(tx, deps.config, orgId, id, result.value, result.expiresAt, { source: 'refresh', actor: null, merge: true });
    await credentials.finishRefresh(tx, orgId, id, executionId, { status: 'success', error: null });
  });
  return { status: 'success', expires_at: result.expiresAt?.toISOString() ?? null };
}

/**
 * Runs inside a failed refresh's transaction, after its notification: another area reacts to the
 * failure of a credential it owns (integrations move a connection whose grant is gone to needs_reconnect).
 */
export type RefreshFailureHook = (
  tx: Db,
  deps: Pick<ServiceDeps, 'sql'> & Partial<Pick<ServiceDeps, 'temporal'>>,
  orgId: string,
  credentialId: string,
  error: string,
) => Promise<void>;
const refreshFailureHooks = new Set<RefreshFailureHook>();
export const onRefreshFailure = (hook: RefreshFailureHook): void => void refreshFailureHooks.add(hook);

/**
 * Records a failed refresh, releases the lock and emits the always-send `credential.refresh_failed`
 * notification, in one transaction; true when this execution still held the lock (a retried call
 * finds it released and neither records nor notifies twice).
 */
export async function failRefresh(
  deps: Pick<ServiceDeps, 'sql'> & Partial<Pick<ServiceDeps, 'temporal'>>,
  orgId: string,
  id: string,
  executionId: string,
  error: string,
): Promise<boolean> {
  return deps.sql.begin(async (tx) => {
    const released = await credentials.finishRefresh(tx, orgId, id, executionId, { status: 'failed', error: error.slice(0, 500) });
    if (!released) return false;
    const row = await credentials.getCredential(tx, orgId, id);
    await emitEvent(tx, orgId, {
      event_type: 'credential.refresh_failed',
      entity_type: 'credential',
      entity_id: id,
      payload: { credential_id: id, credential_name: row?.name ?? null, error: error.slice(0, 500), execution_id: executionId },
    });
    for (const hook of refreshFailureHooks) await hook(tx, deps, orgId, id, error.slice(0, 500));
    return true;
  });
}

// --- Key rotation ----------------------------------------------------------------------------------

/**
 * Re-seals every value sealed by a key other than the current one (after ENCRYPTION_KEY changed and the
 * old key moved to ENCRYPTION_KEYS_PREVIOUS). Batches are short transactions; rows being written
 * meanwhile are skipped and picked up by the next pass. Returns how many values were re-sealed.
 */
export async function resealCredentialValues(deps: Pick<ServiceDeps, 'sql' | 'config'>, batchSize = 200): Promise<number> {
  const ring = credentialKeyring(deps.config);
  let total = 0;
  for (;;) {
    const orgs = await credentials.orgsWithOtherKeys(deps.sql, ring.current.id);
    if (orgs.length === 0) return total;
    let progressed = 0;
    for (const orgId of orgs) {
      for (;;) {
        const done = await deps.sql.begin(async (tx) => {
          const batch = await credentials.valuesWithOtherKeys(tx, orgId, ring.current.id, batchSize);
          for (const row of batch) {
            const plain = open(ring, row.key_id, row.ciphertext, sealedFor(orgId, row.id));
            const sealed = seal(ring, plain, sealedFor(orgId, row.id));
            await credentials.resealValue(tx, orgId, row.id, sealed.keyId, sealed.ciphertext);
          }
          return batch.length;
        });
        total += done;
        progressed += done;
        if (done < batchSize) break;
      }
    }
    if (progressed === 0) return total; // only rows locked by writers remain; they are sealed with the current key
  }
}
