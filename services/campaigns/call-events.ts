import * as contacts from '../../db/campaign-contacts';
import type { CallEvent } from '../../domain/campaigns';
import { notFound, unauthenticated, unavailable } from '../../domain/errors';
import { verifySignature } from '../../platform/adapters/dialers/dialer';
import type { ServiceDeps } from '../deps';
import { signalDispatcher } from './dispatch';

// The telephony provider's signed callback: a call's progress or outcome, handed to its organization's dispatcher.

/**
 * What a call event must show before its body is read: callbacks configured (503), and an
 * `X-Dialer-Signature` of the right shape (401); the signature itself is checked on the raw body.
 */
export function assertCallEventSigned(deps: Pick<ServiceDeps, 'config'>, signature: string): void {
  if (!deps.config.DIALER_CALLBACK_SECRET) throw unavailable('Call events are not configured in this deployment');
  if (!/^sha256=[0-9a-f]{64}$/.test(signature)) throw unauthenticated('Invalid signature');
}

/** A signed call event from the telephony provider, handed to its organization's dispatcher. */
export async function acceptCallEvent(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  event: CallEvent,
  signed: { rawBody: string; signature: string },
) {
  const secret = deps.config.DIALER_CALLBACK_SECRET;
  if (!secret) throw unavailable('Call events are not configured in this deployment');
  if (!verifySignature(secret, signed.rawBody, signed.signature)) throw unauthenticated('Invalid signature');
  const orgId = await contacts.conversationOrg(deps.sql, event.idempotency_key);
  if (!orgId) throw notFound('Call not found');
  await signalDispatcher(deps, orgId, [event]);
  return { status: 'accepted' as const };
}
