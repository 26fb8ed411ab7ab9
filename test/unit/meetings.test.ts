import { describe, expect, it } from 'vitest';
import { advance, attendeesOf, effectOf, meetingPlatform, transcriptText, type VendorEvent } from '../../domain/meetings';
import { verifyWebhook, signWebhook, webhookSecrets } from '../../platform/adapters/meetings/vendor';

const event = (name: string, extra: Partial<VendorEvent> = {}): VendorEvent => ({
  webhook_id: 'msg_1',
  event: name,
  code: name.startsWith('bot.') ? name.slice(4) : 'done',
  sub_code: null,
  occurred_at: '2026-01-01T00:00:00.000Z',
  vendor_bot_id: 'v1',
  recording_id: null,
  transcript_id: null,
  ...extra,
});

describe('meeting links', () => {
  it.each([
    ['https://zoom.us/j/1234567890', 'zoom'],
    ['https://us06web.zoom.us/j/81234567890?pwd=xyz', 'zoom'],
    ['https://zoom.us/my/jane.doe', 'zoom'],
    ['https://meet.google.com/abc-defg-hij', 'google_meet'],
    ['https://meet.google.com/abc-defg-hij?authuser=1', 'google_meet'],
    ['https://teams.microsoft.com/l/meetup-join/19%3ameeting_x%40thread.v2/0', 'microsoft_teams'],
    ['https://teams.live.com/meet/9876543210123', 'microsoft_teams'],
  ])('%s is %s', (url, platform) => expect(meetingPlatform(url)).toBe(platform));

  it.each([
    'http://zoom.us/j/1234567890',
    'https://evilzoom.us/j/1234567890',
    'https://zoom.us.example/j/1234567890',
    'https://user:pw@zoom.us/j/1234567890',
    'https://meet.google.com/ABC-DEFG-HIJ',
    'https://teams.microsoft.com/l/chat',
    'zoom.us/j/1',
  ])('%s is refused', (url) => expect(meetingPlatform(url)).toBeNull());
});

describe('vendor events', () => {
  it('reads status codes, fatal sub codes, recording and transcript events', () => {
    expect(effectOf(event('bot.in_call_recording'))).toEqual({ kind: 'status', status: 'recording' });
    expect(effectOf(event('bot.fatal', { sub_code: 'meeting_not_found' }))).toEqual({ kind: 'fatal', reason: 'meeting_not_found' });
    expect(effectOf(event('bot.done'))).toEqual({ kind: 'recording_ready', recording_id: null });
    expect(effectOf(event('recording.done', { recording_id: 'r1' }))).toEqual({ kind: 'recording_ready', recording_id: 'r1' });
    expect(effectOf(event('transcript.done', { transcript_id: 't1' }))).toEqual({ kind: 'transcript_ready', transcript_id: 't1' });
    expect(effectOf(event('transcript.failed')).kind).toBe('transcript_failed');
    expect(effectOf(event('bot.analysis_done')).kind).toBe('none');
  });

  it('moves statuses forward only and never out of an end', () => {
    expect(advance('recording', 'joining')).toBe('recording');
    expect(advance('joining', 'recording')).toBe('recording');
    expect(advance('failed', 'recording')).toBe('failed');
  });

  it('renders the transcript and its attendees', () => {
    const segments = [
      { speaker: 'Ann', email: 'ann@x.example', text: 'Hello.', start_seconds: 0 },
      { speaker: 'Bo', email: null, text: 'Hi.', start_seconds: 1 },
      { speaker: 'Ann', email: 'ann@x.example', text: 'Bye.', start_seconds: 2 },
    ];
    expect(transcriptText(segments)).toBe('Ann: Hello.\nBo: Hi.\nAnn: Bye.');
    expect(attendeesOf(segments)).toEqual([
      { name: 'Ann', email: 'ann@x.example' },
      { name: 'Bo', email: '' },
    ]);
  });
});

describe('webhook signatures', () => {
  const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
  it('verifies Standard Webhooks and Svix header names against any configured secret', () => {
    const headers = signWebhook(secret, 'msg_9', '{"a":1}');
    expect(verifyWebhook(['whsec_AAAA', secret], '{"a":1}', headers)).toBe('msg_9');
    const svix = {
      'svix-id': headers['webhook-id'],
      'svix-timestamp': headers['webhook-timestamp'],
      'svix-signature': headers['webhook-signature'],
    };
    expect(verifyWebhook([secret], '{"a":1}', svix)).toBe('msg_9');
    expect(verifyWebhook([secret], '{"a":2}', headers)).toBeNull();
    expect(verifyWebhook([secret], '{"a":1}', signWebhook(secret, 'msg_9', '{"a":1}', new Date(Date.now() - 301_000)))).toBeNull();
  });

  it('reads a comma-separated secret list', () => {
    expect(webhookSecrets({ MEETING_WEBHOOK_SECRETS: ` ${secret}, whsec_BBBB ` })).toEqual([secret, 'whsec_BBBB']);
    expect(webhookSecrets({ MEETING_WEBHOOK_SECRETS: undefined })).toEqual([]);
  });
});
