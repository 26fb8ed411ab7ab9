import { z } from 'zod';
import { TWILIO_INBOUND_STATUS_PATH, TWILIO_INBOUND_VOICE_PATH, VAPI_INBOUND_PATH } from '../../platform/adapters/dialers/inbound-routing';
import { assertTwilioSigned, verifyVapiSecretOf } from '../../services/campaigns/telephony-callbacks';
import { acceptTwilioInboundStatus, answerTwilioNumberCall, answerVapiInbound } from '../../services/inbound-calls';
import type { AppDeps } from '../deps';
import { readTwilioRequest } from '../middleware/form-body';
import { reply, type Routes } from '../route';
import { ErrorBody, validationError } from '../schemas/common';
import {
  CallbackAccountQuery,
  TelephonyCallbackAnswer,
  TwilioStatusForm,
  TwilioStatusHeaders,
  VapiHeaders,
} from '../schemas/telephony-callbacks';
import { accountOf } from './telephony-callbacks';

// Calls to the numbers agents answer, as the providers ask about them (docs/decisions/telephony.md). No
// bearer token: each is authenticated as its provider signs it before its body is read.

const TAG = 'Agents';

const TwilioInboundForm = z
  .object({
    AccountSid: z.string(),
    CallSid: z.string(),
    From: z.string().optional(),
    To: z.string().optional().openapi({ description: 'the number called: the agent whose published version holds it answers' }),
  })
  .openapi('TwilioInboundVoiceRequest', { description: "Twilio's voice request parameters (form-encoded); others are ignored" });

const VapiInboundBody = z
  .object({
    message: z.object({
      type: z.string().max(100).openapi({ description: 'assistant-request is answered; other types are acknowledged' }),
      call: z.object({ id: z.string().max(200).optional(), phoneNumberId: z.string().max(200).optional() }).nullish(),
      phoneNumber: z.object({ id: z.string().max(200).optional() }).nullish(),
    }),
  })
  .openapi('VapiInboundMessage', { description: "Vapi's server message (only the fields read are declared; others are ignored)" });

const VapiInboundAnswer = z
  .object({
    assistant: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "the agent's published version as a transient assistant" }),
    error: z.string().optional().openapi({ description: 'no agent answers the number: Vapi speaks this to the caller' }),
  })
  .openapi('VapiInboundAnswer');

const twilioErrors = {
  401: { description: 'Missing or invalid X-Twilio-Signature, or an unknown account', schema: ErrorBody },
  403: { description: 'Of another Twilio account', schema: ErrorBody },
  413: { description: 'Body larger than BODY_LIMIT_BYTES', schema: ErrorBody },
  ...validationError,
  415: { description: 'Body of another media type, or in a charset other than UTF-8', schema: ErrorBody },
  503: { description: 'No account named and Twilio is not the configured dialer', schema: ErrorBody },
} as const;

export function registerTelephonyInboundRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: TWILIO_INBOUND_VOICE_PATH,
    tag: TAG,
    summary: "Twilio's voice request for a call to a number an agent answers (X-Twilio-Signature); answers TwiML; no bearer token",
    description:
      "The number called (`To`) names the organization's number and the agent whose published version answers it: the answer " +
      'streams the call to the voice engine (`<Connect><Stream>` with a short-lived token), its conversation made now, ringing. ' +
      'A number no agent answers gets a few words and a hang-up.',
    auth: 'public',
    query: CallbackAccountQuery,
    headers: TwilioStatusHeaders,
    documented: { body: TwilioInboundForm, bodyContentTypes: ['application/x-www-form-urlencoded'] },
    beforeBody: (ctx) => assertTwilioSigned(deps, ctx.get('x-twilio-signature'), accountOf(ctx)),
    responses: {
      200: {
        description: 'TwiML: a Media Stream to the voice engine, or <Say> and <Hangup/>',
        schema: z.string(),
        contentType: 'text/xml',
      },
      ...twilioErrors,
    },
    handler: async ({ query, ctx }) => {
      const twiml = await answerTwilioNumberCall(deps, { ...(await readTwilioRequest(deps.config, ctx)), account: query.account });
      return reply(200, twiml, undefined, 'text/xml');
    },
  });

  routes.add({
    method: 'post',
    path: TWILIO_INBOUND_STATUS_PATH,
    tag: TAG,
    summary: "Twilio's status callback of a call to a number an agent answers (X-Twilio-Signature); no bearer token",
    description:
      'A call that ended before the voice engine took it (the caller hung up while it was being connected, or it failed) ends its ' +
      'conversation as `no_answer` or `failed`; anything else is acknowledged and changes nothing.',
    auth: 'public',
    query: CallbackAccountQuery,
    headers: TwilioStatusHeaders,
    documented: { body: TwilioStatusForm, bodyContentTypes: ['application/x-www-form-urlencoded'] },
    beforeBody: (ctx) => assertTwilioSigned(deps, ctx.get('x-twilio-signature'), accountOf(ctx)),
    responses: {
      200: { description: 'accepted: the ringing conversation was ended; ignored: nothing to change', schema: TelephonyCallbackAnswer },
      ...twilioErrors,
    },
    handler: async ({ query, ctx }) => {
      return acceptTwilioInboundStatus(deps, { ...(await readTwilioRequest(deps.config, ctx)), account: query.account });
    },
  });

  routes.add({
    method: 'post',
    path: VAPI_INBOUND_PATH,
    tag: TAG,
    summary: "Vapi's server messages for a number or SIP number an agent answers (x-vapi-secret); no bearer token",
    description:
      "An `assistant-request` is answered with the agent's published version as a transient assistant, or with an `error` Vapi " +
      'speaks to the caller when no agent answers the number; other messages are acknowledged with `{}`.',
    auth: 'public',
    query: CallbackAccountQuery,
    headers: VapiHeaders,
    beforeBody: async (ctx) => {
      ctx.state.callbackOrg = await verifyVapiSecretOf(deps, ctx.get('x-vapi-secret') || undefined, accountOf(ctx));
    },
    body: VapiInboundBody,
    responses: {
      200: { description: 'The assistant, an error for the caller, or {}', schema: VapiInboundAnswer },
      401: { description: 'Missing or invalid x-vapi-secret, or an unknown account', schema: ErrorBody },
      413: { description: 'Body larger than BODY_LIMIT_BYTES', schema: ErrorBody },
      ...validationError,
      503: { description: 'No account named and Vapi is not the configured dialer', schema: ErrorBody },
    },
    handler: async ({ body, query, ctx }) => answerVapiInbound(deps, ctx.state.callbackOrg as string | null, query.account, body.message),
  });
}
