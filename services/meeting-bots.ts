import type { Db } from '../db/client';
import * as meetings from '../db/meetings';
import { ACTIVITY_PROVIDER, attendeesOf, transcriptText } from '../domain/meetings';
import type { MeetingVendor } from '../platform/adapters/meetings/vendor';
import type { BotEnding, BotEvents, BotRecording, BotRef, BotTranscript, OpenedBot } from '../workflows/meeting-messages';
import type { ServiceDeps } from './deps';
import { emitEvent } from './notifications/emit';

// The meetingBotWorkflow's steps: the vendor's bot, the bot's status and history, and the transcript
// written to the CRM. The vendor is the worker's one instance (the simulated vendor keeps its bots in
// the process); a VendorRejected it throws is the caller's to classify.

export type MeetingBotDeps = Pick<ServiceDeps, 'sql' | 'logger'> & { vendor: MeetingVendor };

/** The bot's sender, told of its outcome (the notification actor adds each event's subscribers). */
const recipients = async (db: Db, orgId: string, botId: string): Promise<string[]> => {
  const userId = await meetings.creatorUserId(db, orgId, botId);
  return userId ? [userId] : [];
};

/** The bot as its create committed it (waits for that transaction); null when the create rolled back. */
export async function openMeetingBot(deps: Pick<ServiceDeps, 'sql'>, { orgId, botId }: BotRef): Promise<OpenedBot | null> {
  const row = await deps.sql.begin(async (tx) => {
    await meetings.lockBot(tx, orgId, botId);
    return meetings.findBot(tx, orgId, botId);
  });
  if (!row) return null;
  return { status: row.status, join_at: row.join_at?.toISOString() ?? null, leave_requested: row.leave_requested_at !== null };
}

/** Has the vendor's bot join the meeting now; a retry after a stored success returns the same bot; null when the bot is gone. */
export async function createVendorBot(
  { sql, vendor }: MeetingBotDeps,
  { orgId, botId }: BotRef,
): Promise<{ vendor_bot_id: string } | null> {
  const row = await meetings.findBot(sql, orgId, botId);
  if (!row) return null;
  if (row.vendor_bot_id) return { vendor_bot_id: row.vendor_bot_id };
  const { vendor_bot_id } = await vendor.createBot({ bot_id: botId, org_id: orgId, meeting_url: row.meeting_url, bot_name: row.bot_name });
  await meetings.moveBot(sql, orgId, botId, {
    status: 'joining',
    ended: false,
    vendor_bot_id,
    history: [{ status: 'joining', message: `${vendor.name} bot created` }],
  });
  return { vendor_bot_id };
}

export async function recordMeetingBotEvents(deps: Pick<ServiceDeps, 'sql'>, { orgId, botId, status, history }: BotEvents): Promise<void> {
  await meetings.moveBot(deps.sql, orgId, botId, { status, ended: false, history });
}

/**
 * Ends the bot as failed or canceled, with the reason kept on the row and as the last history entry;
 * a failure emits `meeting.bot_failed` to the bot's sender in the same transaction.
 */
export async function finishMeetingBot(
  deps: Pick<ServiceDeps, 'sql' | 'logger'>,
  { orgId, botId, status, reason, history }: BotEnding,
): Promise<void> {
  await deps.sql.begin(async (tx) => {
    const moved = await meetings.moveBot(tx, orgId, botId, {
      status,
      reason,
      ended: true,
      history: [...history, { status, message: reason }],
    });
    if (!moved || status !== 'failed') return;
    const row = await meetings.findBot(tx, orgId, botId);
    await emitEvent(tx, orgId, {
      event_type: 'meeting.bot_failed',
      entity_type: 'meeting_bot',
      entity_id: botId,
      payload: {
        bot_id: botId,
        reason,
        meeting_url: row?.meeting_url,
        platform: row?.platform,
        account_id: row?.account_id,
        deal_id: row?.deal_id,
      },
      recipient_user_ids: await recipients(tx, orgId, botId),
    });
  });
  deps.logger.info({ orgId, botId, status, reason }, 'meeting bot ended');
}

/** Makes the vendor's bot leave the call (a bot already gone is not an error). */
export async function removeVendorBot({ vendor }: Pick<MeetingBotDeps, 'vendor'>, { vendorBotId }: { vendorBotId: string }): Promise<void> {
  await vendor.removeBot(vendorBotId);
}

/** The id of the vendor bot's recording, or null when it recorded nothing. */
export async function findVendorRecording({ vendor }: Pick<MeetingBotDeps, 'vendor'>, { vendorBotId }: { vendorBotId: string }) {
  return vendor.latestRecording(vendorBotId);
}

/** Asks the vendor to transcribe the recording; the bot becomes `transcribing`. */
export async function requestMeetingTranscript(
  { sql, vendor }: MeetingBotDeps,
  { orgId, botId, recordingId }: BotRecording,
): Promise<string> {
  const { transcript_id } = await vendor.requestTranscript(recordingId);
  await sql.begin(async (tx) => {
    await meetings.setRecording(tx, orgId, botId, recordingId, transcript_id);
    await meetings.moveBot(tx, orgId, botId, {
      status: 'transcribing',
      ended: false,
      history: [{ status: 'transcribing', message: 'transcript requested' }],
    });
  });
  return transcript_id;
}

/**
 * Fetches the recording and the transcript, writes the `meeting` activity and completes the bot,
 * in one transaction; returns the activity's id (the same one on a retry), null if the bot is gone.
 */
export async function ingestMeetingTranscript(
  { sql, vendor, logger }: MeetingBotDeps,
  { orgId, botId, recordingId, transcriptId }: BotTranscript,
): Promise<string | null> {
  const row = await meetings.findBot(sql, orgId, botId);
  if (!row) return null;
  if (row.activity_id) return row.activity_id;
  const [recording, segments] = await Promise.all([vendor.fetchRecording(recordingId), vendor.fetchTranscript(transcriptId)]);
  const started = recording.started_at ? Date.parse(recording.started_at) : null;
  const ended = recording.completed_at ? Date.parse(recording.completed_at) : null;
  const platformName = { zoom: 'Zoom', google_meet: 'Google Meet', microsoft_teams: 'Microsoft Teams' }[row.platform];
  const activityId = await sql.begin(async (tx) => {
    const written = await meetings.completeWithActivity(tx, orgId, botId, {
      recording_url: recording.download_url,
      recording_started_at: recording.started_at,
      recording_ended_at: recording.completed_at,
      transcript: transcriptText(segments),
      attendees: attendeesOf(segments),
      subject: `${platformName} meeting${vendor.name === 'simulated' ? ' (simulated capture)' : ''}`,
      provider: ACTIVITY_PROVIDER[row.platform],
      duration_minutes: started !== null && ended !== null ? Math.max(0, Math.round((ended - started) / 60_000)) : null,
    });
    // The activity and its notification commit together (a retry finds the activity and emits nothing).
    if (written.created) {
      await emitEvent(tx, orgId, {
        event_type: 'meeting.transcript_ready',
        entity_type: 'meeting_bot',
        entity_id: botId,
        payload: {
          bot_id: botId,
          activity_id: written.activityId,
          meeting_url: row.meeting_url,
          platform: row.platform,
          account_id: row.account_id,
          deal_id: row.deal_id,
        },
        recipient_user_ids: await recipients(tx, orgId, botId),
      });
    }
    return written.activityId;
  });
  logger.info({ orgId, botId, activityId }, 'meeting transcript written to the CRM');
  return activityId;
}
