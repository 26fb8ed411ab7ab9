import crypto from 'node:crypto';
import type { CallStatus } from '../../../domain/campaigns';
import { publicBaseUrl, type Config } from '../../core/config';
import type { Logger } from '../../core/logger';
import { createSimulatedDialer, type SimulatedCallStore } from './simulated';
import type { CallEventSink, CallRequest, Dialer } from './types';
import type { ProviderCallStore } from './call-store';
import type { TelephonyAccountSettings } from './accounts';
import { createTwilioDialer } from './twilio';
import { createVapiDialer } from './vapi';

// The telephony (or voice runtime) behind campaigns. Placing a call is asynchronous: the provider
// accepts it at once and reports its progress and outcome later, through the signed callback
// POST /campaign/call-events, a provider's own signed callbacks (/telephony/twilio/status,
// /telephony/vapi/events), or, for the built-in simulated dialer, straight to the dispatcher.

export type { CallEvent, CallStatus } from '../../../domain/campaigns';
export { CallRejected, type CallEventSink, type CallRequest, type Dialer, type PlacedCall } from './types';

/** The dialer of a provider account: the organization's own or the deployment's. */
export function createProviderDialer(
  config: Config,
  account: TelephonyAccountSettings,
  deps: {
    providerCalls: ProviderCallStore;
    logger: Logger;
    answerTwiml: (request: CallRequest, connectionId: string | null) => Promise<string>;
  },
): Dialer {
  const common = {
    callbackBaseUrl: publicBaseUrl(config),
    connectionId: account.connectionId,
    timeoutMs: config.DIALER_PROVIDER_TIMEOUT_MS,
    reconcileAfterMs: config.DIALER_RECONCILE_AFTER_SECONDS * 1000,
    calls: deps.providerCalls,
    logger: deps.logger,
  };
  if (account.provider === 'twilio')
    return createTwilioDialer({
      ...common,
      baseUrl: config.TWILIO_API_BASE_URL,
      accountSid: account.accountSid,
      authToken: account.authToken,
      fromNumber: account.fromNumber,
      machineDetection: config.TWILIO_MACHINE_DETECTION,
      answerTwiml: deps.answerTwiml,
    });
  return createVapiDialer({
    ...common,
    baseUrl: config.VAPI_API_BASE_URL,
    apiKey: account.apiKey,
    phoneNumberId: account.phoneNumberId,
    webhookSecret: account.webhookSecret,
  });
}

/** The built-in simulated dialer (no provider; outcomes drawn from DIALER_SIMULATED_OUTCOMES). */
export function createConfiguredSimulatedDialer(
  config: Config,
  deps: { simulatedCalls: SimulatedCallStore; logger: Logger; sink: CallEventSink },
): Dialer {
  return createSimulatedDialer({
    calls: deps.simulatedCalls,
    logger: deps.logger,
    latencyMs: config.DIALER_SIMULATED_LATENCY_MS,
    outcomes: parseOutcomeWeights(config.DIALER_SIMULATED_OUTCOMES),
    sink: deps.sink,
  });
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
