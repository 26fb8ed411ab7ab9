import { updateTwilioCall } from '../../platform/adapters/dialers/twilio-live-call';
import type { ServiceDeps } from '../deps';
import { telephonyOf } from '../integrations/telephony-accounts';

/** Hangs up a live Twilio call the agent ends (a no-op without a call id or a Twilio account). */
export async function hangUpCall(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, callId: string | null): Promise<void> {
  if (!callId) return;
  const telephony = await telephonyOf(deps, orgId);
  if (telephony.kind !== 'account' || telephony.account.provider !== 'twilio') return;
  await updateTwilioCall(
    { baseUrl: deps.config.TWILIO_API_BASE_URL, accountSid: telephony.account.accountSid, authToken: telephony.account.authToken },
    callId,
    { status: 'completed' },
  );
}
