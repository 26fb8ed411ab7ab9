import type { TranscriptSegment } from '../../../domain/meetings';
import { VendorRejected, type MeetingVendor, type VendorRecording } from './types';

// Recall.ai's REST API (v1): `Authorization: Token <key>`, bots under /api/v1/bot/, recordings and
// their async transcripts under /api/v1/recording/ and /api/v1/transcript/. Any service speaking the
// same protocol works behind MEETING_VENDOR_BASE_URL (e.g. https://us-east-1.recall.ai).

/** Every call to the vendor (and to its download links) is bounded. */
const REQUEST_TIMEOUT_MS = 15_000;

interface RecallRecording {
  id: string;
  started_at?: string | null;
  completed_at?: string | null;
  media_shortcuts?: { video_mixed?: { data?: { download_url?: string | null } | null } | null } | null;
}

interface RecallTranscriptEntry {
  participant?: { name?: string | null; email?: string | null } | null;
  words?: { text: string; start_timestamp?: { relative?: number | null } | null }[];
}

export function createRecallVendor(options: { baseUrl: string; apiKey: string }): MeetingVendor {
  const base = options.baseUrl.replace(/\/+$/, '');

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        Authorization: `Token ${options.apiKey}`,
        Accept: 'application/json',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    if (!response.ok) {
      const message = `meeting vendor ${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`;
      // 4xx is the vendor refusing this request; 429 and 5xx may pass on a later try.
      if (response.status >= 400 && response.status < 500 && response.status !== 429) throw new VendorRejected(message);
      throw new Error(message);
    }
    return (text ? JSON.parse(text) : {}) as T;
  }

  return {
    name: 'recall',

    async createBot(request) {
      const bot = await call<{ id: string }>('POST', '/api/v1/bot/', {
        meeting_url: request.meeting_url,
        bot_name: request.bot_name,
        metadata: { bot_id: request.bot_id, org_id: request.org_id },
      });
      return { vendor_bot_id: bot.id };
    },

    async removeBot(vendorBotId) {
      try {
        await call('POST', `/api/v1/bot/${encodeURIComponent(vendorBotId)}/leave_call/`);
      } catch (error) {
        // A bot that already left (or never joined) cannot leave again: it is gone, as asked.
        if (!(error instanceof VendorRejected)) throw error;
      }
    },

    async latestRecording(vendorBotId) {
      const bot = await call<{ recordings?: RecallRecording[] }>('GET', `/api/v1/bot/${encodeURIComponent(vendorBotId)}/`);
      const recordings = bot.recordings ?? [];
      return recordings.length ? recordings[recordings.length - 1]!.id : null;
    },

    async requestTranscript(recordingId) {
      const transcript = await call<{ id: string }>('POST', `/api/v1/recording/${encodeURIComponent(recordingId)}/create_transcript/`, {
        provider: { recallai_async: { language_code: 'auto' } },
      });
      return { transcript_id: transcript.id };
    },

    async fetchRecording(recordingId): Promise<VendorRecording> {
      const r = await call<RecallRecording>('GET', `/api/v1/recording/${encodeURIComponent(recordingId)}/`);
      return {
        id: r.id,
        started_at: r.started_at ?? null,
        completed_at: r.completed_at ?? null,
        download_url: r.media_shortcuts?.video_mixed?.data?.download_url ?? null,
      };
    },

    async fetchTranscript(transcriptId): Promise<TranscriptSegment[]> {
      const t = await call<{ data?: { download_url?: string | null } }>('GET', `/api/v1/transcript/${encodeURIComponent(transcriptId)}/`);
      const url = t.data?.download_url;
      if (!url) throw new Error(`transcript ${transcriptId} has no download_url yet`);
      // Download links are pre-signed: no credentials go with them.
      const response = await fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      if (!response.ok) throw new Error(`transcript download answered ${response.status}`);
      const entries = (await response.json()) as RecallTranscriptEntry[];
      return entries
        .map((e) => ({
          speaker: e.participant?.name?.trim() || 'Unknown speaker',
          email: e.participant?.email ?? null,
          text: (e.words ?? [])
            .map((w) => w.text)
            .join(' ')
            .trim(),
          start_seconds: e.words?.[0]?.start_timestamp?.relative ?? null,
        }))
        .filter((s) => s.text.length > 0);
    },
  };
}
