import { z } from 'zod';
import { TWILIO_SIP_VOICE_PATH } from '../../platform/adapters/dialers/provisioning';
import { answerTwilioSipCall, deploySip, removeSip } from '../../services/agent-sip';
import { assertTwilioSigned } from '../../services/campaigns/telephony-callbacks';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { readTwilioRequest } from '../middleware/form-body';
import { reply, type Routes } from '../route';
import { SipDeployBody, SipDeployment } from '../schemas/agents';
import { ErrorBody, IdParams, Uuid, authErrors, notFoundError, validationError } from '../schemas/common';
import { CallbackAccountQuery, TwilioStatusHeaders } from '../schemas/telephony-callbacks';
import { accountOf } from './telephony-callbacks';

const MANAGE = { scope: 'agentsManage' } as const;
const TAG = 'Agents' as const;

const TwilioVoiceForm = z
  .object({
    AccountSid: z.string(),
    CallSid: z.string(),
    From: z.string().optional(),
    To: z.string().optional().openapi({ description: "the SIP address called, at the agent's SIP domain" }),
  })
  .openapi('TwilioVoiceRequest', { description: "Twilio's voice request parameters (form-encoded); others are ignored" });

/** An agent's SIP endpoint: deploy, remove, and the TwiML Twilio asks for when the agent's SIP domain is called. */
export function registerAgentSipRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/core/agents/{id}/deploy-as-sip',
    tag: TAG,
    summary: "Expose the agent's published version at a SIP address sip:<agent_id>@<sip_host>",
    description:
      "Through the organization's telephony account (its own, else the deployment's DIALER). " +
      'With Twilio, makes a Twilio SIP domain for the agent (`agent-<agent_id>.sip.twilio.com`) whose calls Twilio hands ' +
      `to ${TWILIO_SIP_VOICE_PATH}, answered by streaming them to the voice engine for the agent's published version; callers are ` +
      'let in by a credential list (a username and password made now and returned once in `credentials`) or, with `ip_addresses`, ' +
      'by an IP access control list. With Vapi, makes a Vapi SIP number (sip:agent-<agent_id>@sip.vapi.ai) with a username and ' +
      "password returned once, whose calls ask the service for the agent's assistant. A provider failure is a 502 and leaves " +
      'nothing recorded or made. With the simulated dialer it writes the address sip:<agent_id>@<SIP_HOST> and nothing else ' +
      '(`provisioning: "recorded"` and a `note`). Deploying again answers the endpoint as it is, without a password.',
    auth: MANAGE,
    params: IdParams,
    body: SipDeployBody,
    responses: {
      200: { description: 'Deployed (deploying again returns the same endpoint)', schema: SipDeployment },
      409: {
        description: 'No version is published, the endpoint was removed while it was being made, or ip_addresses at Vapi',
        schema: ErrorBody,
      },
      502: {
        description: 'The provider failed or did not answer within DIALER_PROVIDER_TIMEOUT_MS; nothing was recorded',
        schema: ErrorBody,
      },
      503: {
        description: "The organization's telephony account needs new keys, or it has none where simulated calls are not allowed",
        schema: ErrorBody,
      },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => deploySip(deps, orgOf(auth), actor(auth), params.id, body),
  });

  routes.add({
    method: 'delete',
    path: '/core/agents/{id}/deploy-as-sip',
    tag: TAG,
    summary: "Remove the SIP endpoint, at the provider too (204 also when none was deployed, or the provider's is already gone)",
    auth: MANAGE,
    params: IdParams,
    responses: {
      204: { description: 'Removed' },
      502: { description: 'The provider failed or did not answer; the endpoint stays', schema: ErrorBody },
      503: {
        description:
          "The endpoint was made at another provider than the organization's telephony account now, or the account needs new keys",
        schema: ErrorBody,
      },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, auth }) => {
      await removeSip(deps, orgOf(auth), params.id);
      return reply(204);
    },
  });

  routes.add({
    method: 'post',
    path: TWILIO_SIP_VOICE_PATH,
    tag: TAG,
    summary: "Twilio's voice request for a call to an agent's SIP domain (X-Twilio-Signature); answers TwiML; no bearer token",
    auth: 'public',
    params: z.object({ agent_id: Uuid }),
    query: CallbackAccountQuery,
    headers: TwilioStatusHeaders,
    documented: { body: TwilioVoiceForm, bodyContentTypes: ['application/x-www-form-urlencoded'] },
    // Without a signature of the right shape the body is never read.
    beforeBody: (ctx) => assertTwilioSigned(deps, ctx.get('x-twilio-signature'), accountOf(ctx)),
    responses: {
      200: { description: 'TwiML streaming the call to the voice engine (<Connect><Stream>)', schema: z.string(), contentType: 'text/xml' },
      401: { description: 'Missing or invalid X-Twilio-Signature, or an unknown account', schema: ErrorBody },
      403: { description: 'Of another Twilio account', schema: ErrorBody },
      404: {
        description: "The agent has no SIP domain at Twilio (of the account's organization), or no published version",
        schema: ErrorBody,
      },
      413: { description: 'Body larger than BODY_LIMIT_BYTES', schema: ErrorBody },
      ...validationError,
      415: { description: 'Body of another media type, or in a charset other than UTF-8', schema: ErrorBody },
      503: { description: 'No account named and Twilio is not the configured dialer', schema: ErrorBody },
    },
    handler: async ({ params, query, ctx }) => {
      const twiml = await answerTwilioSipCall(deps, {
        ...(await readTwilioRequest(deps.config, ctx)),
        agentId: params.agent_id,
        account: query.account,
      });
      return reply(200, twiml, undefined, 'text/xml');
    },
  });
}
