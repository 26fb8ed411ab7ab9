import type { Config } from '../../core/config';
import type { Logger } from '../../core/logger';
import { createRecallVendor } from './recall';
import { createSimulatedVendor } from './simulated';
import type { MeetingVendor } from './types';

// The meeting vendor in use, chosen by configuration. The interface and its errors are in
// meeting-vendor-types.ts and the webhook signatures in meeting-webhooks.ts, so the vendors import
// them without importing this factory.

export * from './types';
export * from './webhooks';

export function createMeetingVendor(config: Config, logger: Logger): MeetingVendor {
  if (config.MEETING_VENDOR_BASE_URL) {
    return createRecallVendor({ baseUrl: config.MEETING_VENDOR_BASE_URL, apiKey: config.MEETING_VENDOR_API_KEY! });
  }
  return createSimulatedVendor(config, logger);
}
