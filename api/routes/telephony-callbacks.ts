import { z } from 'zod';
import type Koa from 'koa';
import { TWILIO_AMD_PATH, TWILIO_STATUS_PATH } from '../../platform/adapters/dialers/twilio';
import { VAPI_EVENTS_PATH } from '../../platform/adapters/dialers/vapi';
import {
  acceptTwilioAmd,
  acceptTwilioStatus,
  acceptVapiMessage,
  assertTwilioSigned,
  verifyVapiSecretOf,
} from '../../services/campaigns/telephony-callbacks';
import { MAX_STREAM_RESUMES } from '../../domain/voice-resume';
import { answerStreamEnded } from '../../services/conversations/stream-ended';
import { TWILIO_STREAM_ENDED_PATH } from '../../services/conversations/stream-twiml';
import type { AppDeps } from '../deps';
import { readTwilioRequest } from '../middleware/form-body';
import { reply, type Routes } from '../route';
import { ErrorBody, validationError } from '../schemas/common';
import {
  CallbackAccountQuery,
  TelephonyCallbackAnswer,
  TwilioAmdForm,
  TwilioStatusForm,
  TwilioStatusHeaders,
  TwilioStatusQuery,
  TwilioStreamEndedForm,
  TwilioStreamEndedQuery,
  VapiHeaders,
  VapiMessageBody,
} from '../schemas/telephony-callbacks';

// The telephony providers' own signed callbacks for campaign calls (docs/decisions/telephony.md). No
// bearer token: each is authenticated as its provider signs it, before anything else is done with it.

const TAG = 'Campaigns';

/** The connected account a callback URL names, read before the query is validated (a malformed one is unknown: 401). */
export const accountOf = (ctx: Koa.Context): string | undefined => {
  const value = ctx.query.account;
  return typeof value === 'string' && value !== '' ? value : undefined;
};

const answers = (signature: string) =>
  ({
    200: {
      description: 'Verified; the call already shows this event (a replay or duplicate), or the service does not read it',
      schema: TelephonyCallbackAnswer,
    },
    202: { description: 'Verified and handed to the organization dispatcher', schema: TelephonyCallbackAnswer },
    401: { description: `Missing or invalid ${signature}, or an unknown account`, schema: ErrorBody },
    403: {
      description: 'Genuine, but older than TELEPHONY_CALLBACK_MAX_AGE_SECONDS (a replay), or of another provider account',
      schema: ErrorBody,
    },
    404: { description: "No campaign call has this attempt key (of the account's organization)", schema: ErrorBody },
    413: { description: 'Body larger than BODY_LIMIT_BYTES', schema: ErrorBody },
    ...validationError,
    415: { description: 'Body of another media type, or in a charset other than UTF-8', schema: ErrorBody },
    503: {
      description: 'No account named and this provider is not the configured dialer, or the workflow engine is unavailable',
      schema: ErrorBody,
    },
  }) as const;

export function registerTelephonyCallbackRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: TWILIO_STATUS_PATH,
    tag: TAG,
    summary: "Twilio's status callback of a campaign call (X-Twilio-Signature); no bearer token",
    auth: 'public',
    query: TwilioStatusQuery,
    headers: TwilioStatusHeaders,
    documented: { body: TwilioStatusForm, bodyContentTypes: ['application/x-www-form-urlencoded'] },
    // Without a signature of the right shape the body is never read.
    beforeBody: (ctx) => assertTwilioSigned(deps, ctx.get('x-twilio-signature'), accountOf(ctx)),
    responses: answers('X-Twilio-Signature'),
    handler: async ({ query, ctx }) => {
      const answer = await acceptTwilioStatus(deps, {
        ...(await readTwilioRequest(deps.config, ctx)),
        key: query.key,
        account: query.account,
      });
      return reply(answer.status === 'accepted' ? 202 : 200, answer);
    },
  });

  routes.add({
    method: 'post',
    path: TWILIO_AMD_PATH,
    tag: TAG,
    summary: "Twilio's asynchronous answering-machine verdict of a campaign call (X-Twilio-Signature); no bearer token",
    description:
      'A machine verdict reaches the voice engine holding the call, which hangs up or leaves the agent’s voicemail message ' +
      'as its `end_call.end_on_voicemail` says; every verdict is kept in the call’s outcome (`answered_by`).',
    auth: 'public',
    query: TwilioStatusQuery,
    headers: TwilioStatusHeaders,
    documented: { body: TwilioAmdForm, bodyContentTypes: ['application/x-www-form-urlencoded'] },
    beforeBody: (ctx) => assertTwilioSigned(deps, ctx.get('x-twilio-signature'), accountOf(ctx)),
    responses: answers('X-Twilio-Signature'),
    handler: async ({ query, ctx }) => {
      const answer = await acceptTwilioAmd(deps, {
        ...(await readTwilioRequest(deps.config, ctx)),
        key: query.key,
        account: query.account,
      });
      return reply(answer.status === 'accepted' ? 202 : 200, answer);
    },
  });

  routes.add({
    method: 'post',
    path: TWILIO_STREAM_ENDED_PATH,
    tag: 'Agents',
    summary: "Twilio's question when a call's Media Stream ends (<Connect action>, X-Twilio-Signature); answers TwiML; no bearer token",
    description:
      'A conversation that ended hangs up. One whose voice engine was lost (killed, or draining) is streamed again to the ' +
      'engine the public voice address reaches now, which takes it from its recorded turns; after ' +
      `${MAX_STREAM_RESUMES} such resumes the caller is told and the call ends.`,
    auth: 'public',
    query: TwilioStreamEndedQuery,
    headers: TwilioStatusHeaders,
    documented: { body: TwilioStreamEndedForm, bodyContentTypes: ['application/x-www-form-urlencoded'] },
    beforeBody: (ctx) => assertTwilioSigned(deps, ctx.get('x-twilio-signature'), accountOf(ctx)),
    responses: {
      200: { description: 'TwiML: <Hangup/>, or <Connect><Stream> to an engine', schema: z.string(), contentType: 'text/xml' },
      401: { description: 'Missing or invalid X-Twilio-Signature, or an unknown account', schema: ErrorBody },
      403: { description: 'Of another Twilio account', schema: ErrorBody },
      404: { description: "No such conversation (of the account's organization, on this call)", schema: ErrorBody },
      413: { description: 'Body larger than BODY_LIMIT_BYTES', schema: ErrorBody },
      ...validationError,
      415: { description: 'Body of another media type, or in a charset other than UTF-8', schema: ErrorBody },
      503: {
        description: 'No account named and Twilio is not the configured dialer, or the workflow engine is unavailable',
        schema: ErrorBody,
      },
    },
    handler: async ({ query, ctx }) => {
      const request = await readTwilioRequest(deps.config, ctx);
      const twiml = await answerStreamEnded(deps, { ...request, ...query });
      return reply(200, twiml, undefined, 'text/xml');
    },
  });

  routes.add({
    method: 'post',
    path: VAPI_EVENTS_PATH,
    tag: TAG,
    summary: "Vapi's server messages of a campaign call (x-vapi-secret); no bearer token",
    auth: 'public',
    query: CallbackAccountQuery,
    headers: VapiHeaders,
    // Without the secret of the account the URL names, the body is never read.
    beforeBody: async (ctx) => {
      ctx.state.callbackOrg = await verifyVapiSecretOf(deps, ctx.get('x-vapi-secret') || undefined, accountOf(ctx));
    },
    body: VapiMessageBody,
    responses: answers('x-vapi-secret'),
    handler: async ({ body, ctx }) => {
      const answer = await acceptVapiMessage(deps, body.message, ctx.state.callbackOrg as string | null);
      return reply(answer.status === 'accepted' ? 202 : 200, answer);
    },
  });
}
