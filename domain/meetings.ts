// Meeting capture rules: which meeting links a bot can join, the bot's statuses, and how the vendor's
// event stream (Recall.ai's codes) moves a bot. Pure: shared by the API, the workflow and activities.

export const MEETING_PLATFORMS = ['zoom', 'google_meet', 'microsoft_teams'] as const;
export type MeetingPlatform = (typeof MEETING_PLATFORMS)[number];

export const BOT_STATUSES = [
  'scheduled', // waiting for join_at; no vendor bot yet
  'joining',
  'waiting_room',
  'in_call', // joined, not recording
  'recording',
  'call_ended', // the call is over; the recording is being finalized by the vendor
  'transcribing', // transcript requested from the vendor
  'completed', // transcript written to the CRM
  'failed',
  'canceled', // removed before it recorded anything
] as const;
export type BotStatus = (typeof BOT_STATUSES)[number];
export const FINAL_BOT_STATUSES: readonly BotStatus[] = ['completed', 'failed', 'canceled'];
export const isFinalBotStatus = (s: BotStatus) => FINAL_BOT_STATUSES.includes(s);

/** Statuses move forward only: webhooks may arrive out of order (the vendor's delivery does not order them). */
const RANK: Record<BotStatus, number> = {
  scheduled: 0,
  joining: 1,
  waiting_room: 2,
  in_call: 3,
  recording: 4,
  call_ended: 5,
  transcribing: 6,
  completed: 7,
  failed: 7,
  canceled: 7,
};

/** One path segment of a Teams link that is not a dot segment (".", "..", "%2e"...), which a URL would resolve away. */
const TEAMS_UNIT = "(?:[A-Za-z0-9_~!$&'()*+,;=:@.-]|%[0-9A-Fa-f]{2})";
const TEAMS_NOT_DOT = "(?:[A-Za-z0-9_~!$&'()*+,;=:@-]|%(?:[013-9A-Fa-f][0-9A-Fa-f]|2[0-9A-Da-dFf]))";
const TEAMS_SEGMENT = `${TEAMS_UNIT}*${TEAMS_NOT_DOT}${TEAMS_UNIT}*`;

/**
 * The links meetingPlatform takes, as written (lower-case scheme and host, no port, no user, no dot segments): the
 * document's pattern for a meeting link. Path rules are meetingPlatform's; a query or fragment may follow.
 */
export const MEETING_URL_PATTERN =
  '^https://(?:' +
  '(?:[a-z0-9-]+\\.)?zoom(?:gov)?\\.(?:us|com)/(?:(?:j|s|w|wc/join)/[0-9]{9,12}/?' +
  '|my/(?:[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}|\\.[A-Za-z0-9_-][A-Za-z0-9_.-]{0,62}|\\.\\.[A-Za-z0-9_.-]{1,62})/?)' +
  '|meet\\.google\\.com/[a-z]{3}-[a-z]{4}-[a-z]{3}/?' +
  `|teams\\.(?:microsoft\\.com|live\\.com)/(?:l/meetup-join/${TEAMS_SEGMENT}(?:/${TEAMS_SEGMENT})*/?|meet/[0-9]{6,20}/?)` +
  ')(?:[?#][^\\s\\u0000]*)?$';

/** The meeting's platform from its link, or null when it is not a Zoom, Google Meet or Teams meeting link. */
export function meetingPlatform(link: string): MeetingPlatform | null {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' || url.username || url.password || url.port) return null;
  const host = url.hostname.toLowerCase();
  const path = url.pathname;
  if (/^([a-z0-9-]+\.)?zoom(gov)?\.(us|com)$/.test(host) && /^\/(j|s|w|wc\/join)\/\d{9,12}\/?$|^\/my\/[\w.-]{1,64}\/?$/.test(path))
    return 'zoom';
  if (host === 'meet.google.com' && /^\/[a-z]{3}-[a-z]{4}-[a-z]{3}\/?$/.test(path)) return 'google_meet';
  if ((host === 'teams.microsoft.com' || host === 'teams.live.com') && /^\/(l\/meetup-join\/.+|meet\/\d{6,20}\/?)$/.test(path))
    return 'microsoft_teams';
  return null;
}

/** What a meeting activity names as its provider (the activity's `provider` field). */
export const ACTIVITY_PROVIDER: Record<MeetingPlatform, string> = { zoom: 'zoom', google_meet: 'google_meet', microsoft_teams: 'teams' };

/**
 * One event of the vendor's stream, as the capture webhook hands it to the bot's workflow:
 * `bot.<code>` status changes, `recording.done|failed`, `transcript.done|failed`.
 */
export interface VendorEvent {
  webhook_id: string;
  event: string;
  code: string | null;
  sub_code: string | null;
  occurred_at: string;
  vendor_bot_id: string | null;
  recording_id: string | null;
  transcript_id: string | null;
}

/** The vendor's bot status codes and the status each moves a bot to (codes not listed only enter the history). */
const BOT_CODE_STATUS: Record<string, BotStatus> = {
  joining_call: 'joining',
  in_waiting_room: 'waiting_room',
  in_call_not_recording: 'in_call',
  recording_permission_allowed: 'in_call',
  recording_permission_denied: 'in_call',
  in_call_recording: 'recording',
  recording_done: 'call_ended',
  call_ended: 'call_ended',
  done: 'call_ended',
};

/** What an event means for the bot's workflow. */
export type EventEffect =
  | { kind: 'status'; status: BotStatus }
  | { kind: 'fatal'; reason: string }
  | { kind: 'recording_ready'; recording_id: string | null }
  | { kind: 'transcript_ready'; transcript_id: string }
  | { kind: 'transcript_failed'; reason: string }
  | { kind: 'none' };

/** The vendor's event name and code, read as an effect on the bot. */
export function effectOf(event: VendorEvent): EventEffect {
  const [family, action] = event.event.split('.', 2) as [string, string | undefined];
  if (family === 'bot') {
    const code = event.code ?? action ?? '';
    if (code === 'fatal') return { kind: 'fatal', reason: event.sub_code ?? 'fatal' };
    // `done`: the bot has shut down and any recording is uploaded.
    if (code === 'done') return { kind: 'recording_ready', recording_id: event.recording_id };
    const status = BOT_CODE_STATUS[code];
    return status ? { kind: 'status', status } : { kind: 'none' };
  }
  if (family === 'recording') {
    if (action === 'done') return { kind: 'recording_ready', recording_id: event.recording_id };
    if (action === 'failed') return { kind: 'fatal', reason: `recording_failed${event.sub_code ? `: ${event.sub_code}` : ''}` };
  }
  if (family === 'transcript') {
    if (action === 'done' && event.transcript_id) return { kind: 'transcript_ready', transcript_id: event.transcript_id };
    if (action === 'failed')
      return { kind: 'transcript_failed', reason: `transcript_failed${event.sub_code ? `: ${event.sub_code}` : ''}` };
  }
  return { kind: 'none' };
}

/** The status after a move to `to`: never backwards, never out of a final status. */
export function advance(current: BotStatus, to: BotStatus): BotStatus {
  if (isFinalBotStatus(current)) return current;
  return RANK[to] > RANK[current] ? to : current;
}

/** The bot was in the call (so something may have been recorded). */
export const hasJoined = (s: BotStatus) => RANK[s] >= RANK.in_call && !isFinalBotStatus(s);

export interface TranscriptSegment {
  speaker: string;
  email: string | null;
  text: string;
  start_seconds: number | null;
}

/** The transcript as plain text, one `Speaker: words` paragraph per turn. */
export const transcriptText = (segments: TranscriptSegment[]): string => segments.map((s) => `${s.speaker}: ${s.text}`).join('\n');

/** Everyone who spoke, once each, in order of first appearance (email empty when the vendor does not know it). */
export function attendeesOf(segments: TranscriptSegment[]): { name: string; email: string }[] {
  const seen = new Map<string, { name: string; email: string }>();
  for (const s of segments) if (!seen.has(s.speaker)) seen.set(s.speaker, { name: s.speaker, email: s.email ?? '' });
  return [...seen.values()];
}

/** A history entry: the status the bot is in after it, and the vendor's code when the vendor caused it. */
export interface BotHistoryEntry {
  status: BotStatus;
  vendor_code?: string | null;
  sub_code?: string | null;
  message?: string | null;
  occurred_at?: string | null;
}
