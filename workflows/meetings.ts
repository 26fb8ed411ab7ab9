import { ActivityFailure, ApplicationFailure, allHandlersFinished, condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { MeetingActivities } from '../activities/meetings';
import { advance, effectOf, hasJoined, type BotHistoryEntry, type BotStatus, type VendorEvent } from '../domain/meetings';
import { leaveMeetingSignal, meetingBotStatusQuery, vendorEventSignal, type MeetingBotInput } from './meeting-messages';

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' } as const;

const {
  openMeetingBot,
  recordMeetingBotEvents,
  finishMeetingBot,
  requestMeetingTranscript,
  ingestMeetingTranscript,
  removeVendorBot,
  findVendorRecording,
} = proxyActivities<MeetingActivities>({ startToCloseTimeout: '1 minute', retry: { ...retry, maximumAttempts: 10 } });
// Creating a vendor bot is not idempotent on the vendor's side: few attempts, so a lost answer costs at most a few bots.
const { createVendorBot } = proxyActivities<MeetingActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { ...retry, maximumAttempts: 3 },
});
const failureMessage = (error: unknown): string => {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : String(cause);
};

/**
 * One meeting bot (`meeting-bot:<bot_id>`): it waits for join_at, has the vendor's bot join, follows
 * the vendor's lifecycle from webhook signals, requests the transcript once the recording is done,
 * writes the meeting to the CRM as a `meeting` activity, then emits "meeting transcript ready". A fatal vendor status, a timeout, or a
 * leave request before the bot joined ends it with the reason recorded.
 */
export async function meetingBotWorkflow(input: MeetingBotInput): Promise<BotStatus | 'missing'> {
  const { botId, orgId, limits } = input;
  const queue: VendorEvent[] = [];
  let leave = false;
  let status: BotStatus = 'scheduled';
  setHandler(vendorEventSignal, (event) => {
    queue.push(event);
  });
  setHandler(leaveMeetingSignal, () => {
    leave = true;
  });
  setHandler(meetingBotStatusQuery, () => status);

  const finish = async (to: 'failed' | 'canceled', reason: string, history: BotHistoryEntry[] = []): Promise<BotStatus> => {
    status = to;
    // A failure's notification is emitted with the final write.
    await finishMeetingBot({ orgId, botId, status: to, reason, history });
    await condition(allHandlersFinished);
    return status;
  };

  // The row is written in the transaction that started this workflow; a rolled-back create leaves none.
  const opened = await openMeetingBot({ orgId, botId });
  if (!opened) return 'missing';
  status = opened.status;
  leave ||= opened.leave_requested;

  if (opened.join_at) {
    const wait = Date.parse(opened.join_at) - Date.now();
    if (wait > 0) await condition(() => leave, wait);
  }
  if (leave) return finish('canceled', 'removed before joining');

  let vendorBotId: string;
  try {
    vendorBotId = (await createVendorBot({ orgId, botId })).vendor_bot_id;
  } catch (error) {
    return finish('failed', `the meeting vendor did not create the bot: ${failureMessage(error)}`);
  }
  status = 'joining';

  let deadline = Date.now() + limits.joinTimeoutMs;
  let leaveSent = false;
  let recordingId: string | null = null;
  let transcriptId: string | null = null;

  const removeQuietly = async () => {
    try {
      await removeVendorBot({ vendorBotId });
    } catch {
      // the bot ends on our side whatever the vendor answers
    }
  };

  for (;;) {
    const woke = await condition(() => queue.length > 0 || (leave && !leaveSent), Math.max(deadline - Date.now(), 1));
    if (!woke) {
      await removeQuietly();
      const reason = transcriptId
        ? `no transcript within ${limits.transcriptTimeoutMs / 1000} seconds`
        : hasJoined(status)
          ? `the meeting did not end within ${limits.maxDurationMs / 1000} seconds`
          : `the bot did not join the call within ${limits.joinTimeoutMs / 1000} seconds`;
      return finish('failed', reason);
    }

    if (leave && !leaveSent) {
      leaveSent = true;
      await removeQuietly();
      // A bot that never got in has nothing to process; one that was in the call is finalized by the
      // vendor (call ended, done, recording done) and what it recorded goes on to the CRM.
      if (!hasJoined(status)) return finish('canceled', 'removed before it joined the call');
    }

    const joinedBefore = hasJoined(status);
    let next: BotStatus = status;
    let recordingReady = false;
    let transcriptReady = false;
    let fatal: string | null = null;
    const history: BotHistoryEntry[] = [];
    for (const event of queue.splice(0)) {
      const effect = effectOf(event);
      const entry = {
        vendor_code: event.code ?? event.event,
        sub_code: event.sub_code,
        message: event.event,
        occurred_at: event.occurred_at,
      };
      if (effect.kind === 'fatal' || effect.kind === 'transcript_failed') {
        fatal ??= effect.reason;
        history.push({ ...entry, status: 'failed' });
        continue;
      }
      if (effect.kind === 'status') next = advance(next, effect.status);
      if (effect.kind === 'recording_ready') {
        next = advance(next, 'call_ended');
        recordingReady = true;
        recordingId ??= effect.recording_id;
      }
      if (effect.kind === 'transcript_ready' && transcriptId && effect.transcript_id === transcriptId) transcriptReady = true;
      history.push({ ...entry, status: next });
    }
    if (fatal) return finish('failed', fatal, history);
    if (history.length) await recordMeetingBotEvents({ orgId, botId, status: next, history });
    status = next;
    if (!joinedBefore && hasJoined(status) && !transcriptId) deadline = Date.now() + limits.maxDurationMs;

    if (recordingReady && !transcriptId) {
      recordingId ??= await findVendorRecording({ vendorBotId });
      if (!recordingId) return finish(leaveSent ? 'canceled' : 'failed', 'the bot recorded nothing');
      transcriptId = await requestMeetingTranscript({ orgId, botId, recordingId });
      status = 'transcribing';
      deadline = Date.now() + limits.transcriptTimeoutMs;
    }

    if (transcriptReady && recordingId && transcriptId) {
      // Writes the activity, completes the bot and emits "meeting transcript ready", in one transaction.
      await ingestMeetingTranscript({ orgId, botId, recordingId, transcriptId });
      status = 'completed';
      await condition(allHandlersFinished);
      return status;
    }
  }
}
