import crypto from 'node:crypto';
import type { CallStatus } from '../../../domain/campaigns';
import { publicBaseUrl, type Config } from '../../core/config';
import type { Logger } from '../../core/logger';
import { createSimulatedDialer, type SimulatedCallStore } from './simulated';
import type { CallEventSink, Dialer } from './types';
import type { ProviderCallStore } from './call-store';
import { createTwilioDialer } from './twilio';
import { createVapiDialer } from './vapi';

// The telephony (or voice runtime) behind campaigns. Placing a call is asynchronous: the provider
// accepts it at once and reports its progress and outcome later, through the signed callback
// POST /campaign/call-events, a provider's own signed callbacks (/telephony/twilio/status,
// /telephony/vapi/events), or, for the built-in simulated dialer, straight to the dispatcher.

export type { CallEvent, CallStatus } from '../../../domain/campaigns';
export { CallRejected, type CallEventSink, type CallRequest, type Dialer, type PlacedCall } from './types';

/** The configured dialer; `simulatedCalls` and `providerCalls` are where the simulated and provider ones remember their calls. */
export function createDialer(
  config: Config,
  deps: { simulatedCalls: SimulatedCallStore; providerCalls: ProviderCallStore; logger: Logger; sink: CallEventSink },
): Dialer {
  switch (config.DIALER) {
    case 'twilio':
      return createTwilioDialer({
        baseUrl: config.TWILIO_API_BASE_URL,
        accountSid: config.TWILIO_ACCOUNT_SID!,
        authToken: config.TWILIO_AUTH_TOKEN!,
        fromNumber: config.TWILIO_FROM_NUMBER ?? null,
        machineDetection: config.TWILIO_MACHINE_DETECTION,
        callbackBaseUrl: publicBaseUrl(config),
        sipHost: config.SIP_HOST,
        timeoutMs: config.DIALER_PROVIDER_TIMEOUT_MS,
        reconcileAfterMs: config.DIALER_RECONCILE_AFTER_SECONDS * 1000,
        calls: deps.providerCalls,
        logger: deps.logger,
      });
    case 'vapi':
      return createVapiDialer({
        baseUrl: config.VAPI_API_BASE_URL,
        apiKey: config.VAPI_API_KEY!,
        phoneNumberId: config.VAPI_PHONE_NUMBER_ID!,
        webhookSecret: config.VAPI_WEBHOOK_SECRET!,
        callbackBaseUrl: publicBaseUrl(config),
        timeoutMs: config.DIALER_PROVIDER_TIMEOUT_MS,
        reconcileAfterMs: config.DIALER_RECONCILE_AFTER_SECONDS * 1000,
        calls: deps.providerCalls,
        logger: deps.logger,
      });
    case 'simulated':
      return createSimulatedDialer({
        calls: deps.simulatedCalls,
        logger: deps.logger,
        latencyMs: config.DIALER_SIMULATED_LATENCY_MS,
        outcomes: parseOutcomeWeights(config.DIALER_SIMULATED_OUTCOMES),
        sink: deps.sink,
      });
  }
}

/** `completed:0.8,no_answer:0.2` → weighted outcomes (config validates the shape). */
export function parseOutcomeWeights(spec: string): [CallStatus, number][] {
  return spec.split(',').map((part) => {
    const [status, weight] = part.split(':');
    return [status as CallStatus, Number(weight)];
  });
}

/** The X-Dialer-Signature of a callback body: `sha256=<hex HMAC-SHA256 of the raw body>`. */
export const signBody = (secret: string, rawBody: string): string =>
  `sha256=${crypto.createHmac('sha256', secret).update(rawBody).digest('hex')}`;

/** Checks a callback's signature against the exact raw body, in constant time. */
export function verifySignature(secret: string, rawBody: string, header: string): boolean {
  const expected = Buffer.from(signBody(secret, rawBody));
  const given = Buffer.from(header);
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}
