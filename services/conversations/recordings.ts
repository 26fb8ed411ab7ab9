import { ScheduleOverlapPolicy } from '@temporalio/client';
import * as conversations from '../../db/conversations';
import type { ServiceDeps } from '../deps';
import { createSchedule } from '../workflow-client';
import { recordingRetentionScheduleId, recordingRetentionWorkflowRef } from '../../workflows/conversation-messages';

// Conversation recordings in object storage: written by the engine when the call ends, deleted after
// the version's retention_days by a daily schedule.

export const recordingKey = (orgId: string, conversationId: string) => `conversations/${orgId}/${conversationId}.wav`;

export async function storeRecording(
  deps: Pick<ServiceDeps, 'storage'>,
  orgId: string,
  conversationId: string,
  wav: Buffer,
): Promise<string> {
  const key = recordingKey(orgId, conversationId);
  await deps.storage.put(key, wav, { contentType: 'audio/wav', contentLength: wav.length });
  return key;
}

const SWEEP_PAGE = 200;

/** Deletes one page of expired recordings (object first, then the row's key); answers how many. */
export async function sweepExpiredRecordings(deps: Pick<ServiceDeps, 'sql' | 'storage'>): Promise<number> {
  const expired = await conversations.expiredRecordings(deps.sql, SWEEP_PAGE);
  for (const r of expired) {
    await deps.storage.delete(r.recording_key);
    await conversations.forgetRecording(deps.sql, r.org_id, r.id);
  }
  return expired.length;
}

/** The daily retention sweep's schedule, made once (the worker asks at start). */
export async function ensureRecordingRetentionSchedule(deps: Pick<ServiceDeps, 'temporal' | 'config' | 'logger'>): Promise<void> {
  // Not one organization's: the sweep runs for all, tagged `system` for the Temporal UI's filter.
  const created = await createSchedule(deps, recordingRetentionWorkflowRef, 'system', {
    scheduleId: recordingRetentionScheduleId,
    spec: { intervals: [{ every: '1 day' }] },
    start: { workflowId: 'conversation-recordings-retention-run', args: [] },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour', pauseOnFailure: false },
  });
  if (created) deps.logger.info('conversation recording retention schedule created');
}
