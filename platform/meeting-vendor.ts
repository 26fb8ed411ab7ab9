import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { TranscriptSegment } from '../domain/meetings';
import type { Config } from './config';
import type { Logger } from './logger';
import { createRecallVendor } from './meeting-vendor-recall';
import { createSimulatedVendor } from './meeting-vendor-simulated';

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

/** The signing secrets accepted on the capture webhook, newest first (rotation: old ones stay listed for a while). */
export function webhookSecrets(config: Pick<Config, 'MEETING_WEBHOOK_SECRETS'>): string[] {
  return (config.MEETING_WEBHOOK_SECRETS ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A header value by either naming: Standard Webhooks (`webhook-*`) or Svix (`svix-*`), which Recall.ai sends. */
function signatureHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const get = (name: string): string => {
    const value = headers[`webhook-${name}`] ?? headers[`svix-${name}`];
    return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
  };
  return { 'webhook-id': get('id'), 'webhook-timestamp': get('timestamp'), 'webhook-signature': get('signature') };
}

/**
 * Verifies a capture webhook against every configured secret (five minutes of timestamp tolerance, as
 * the standardwebhooks library fixes it). Returns the message id, or null when no secret verifies it.
 */
export function verifyWebhook(secrets: string[], rawBody: string, headers: Record<string, string | string[] | undefined>): string | null {
  const normalized = signatureHeaders(headers);
  for (const secret of secrets) {
    try {
      new Webhook(secret).verify(rawBody, normalized, { jsonParse: false });
      return normalized['webhook-id']!;
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
    }
  }
  return null;
}

/** Standard Webhooks headers for one message (what the simulated vendor and tests send). */
export function signWebhook(secret: string, id: string, body: string, at = new Date()): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}

export function createMeetingVendor(config: Config, logger: Logger): MeetingVendor {
  if (config.MEETING_VENDOR_BASE_URL) {
    return createRecallVendor({ baseUrl: config.MEETING_VENDOR_BASE_URL, apiKey: config.MEETING_VENDOR_API_KEY! });
  }
  return createSimulatedVendor(config, logger);
}
