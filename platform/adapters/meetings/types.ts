import type { TranscriptSegment } from '../../../domain/meetings';

// The meeting-bot vendor behind meeting capture. Creating a bot is asynchronous: the vendor accepts it
// at once and reports its lifecycle (joining, in call, recording, done) and the transcript later,
// through signed webhooks to POST /meetings/webhooks/capture.

export interface CreateBotRequest {
  /** Our bot id and organization, sent as the vendor bot's metadata so every webhook names them. */
  bot_id: string;
  org_id: string;
  meeting_url: string;
  bot_name: string;
}

export interface VendorRecording {
  id: string;
  started_at: string | null;
  completed_at: string | null;
  download_url: string | null;
}

export interface MeetingVendor {
  /** `simulated` or `recall`; shown on every bot. */
  readonly name: string;
  createBot(request: CreateBotRequest): Promise<{ vendor_bot_id: string }>;
  /** Makes the bot leave the call (or never join); a bot already gone is not an error. */
  removeBot(vendorBotId: string): Promise<void>;
  /** The id of the bot's recording, or null when it recorded nothing. */
  latestRecording(vendorBotId: string): Promise<string | null>;
  requestTranscript(recordingId: string): Promise<{ transcript_id: string }>;
  fetchRecording(recordingId: string): Promise<VendorRecording>;
  fetchTranscript(transcriptId: string): Promise<TranscriptSegment[]>;
}

/** The vendor refused the request for good (4xx other than 429): retrying cannot help. */
export class VendorRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VendorRejected';
  }
}
