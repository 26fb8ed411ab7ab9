import type { Config } from './config';
import type { Logger } from './logger';
import { createRecallVendor } from './meeting-vendor-recall';
import { createSimulatedVendor } from './meeting-vendor-simulated';
import type { MeetingVendor } from './meeting-vendor-types';

// The meeting vendor in use, chosen by configuration. The interface and its errors are in
// meeting-vendor-types.ts and the webhook signatures in meeting-webhooks.ts, so the vendors import
// them without importing this factory.

export * from './meeting-vendor-types';
export * from './meeting-webhooks';

export function createMeetingVendor(config: Config, logger: Logger): MeetingVendor {
  if (config.MEETING_VENDOR_BASE_URL) {
    return createRecallVendor({ baseUrl: config.MEETING_VENDOR_BASE_URL, apiKey: config.MEETING_VENDOR_API_KEY! });
  }
  return createSimulatedVendor(config, logger);
}
