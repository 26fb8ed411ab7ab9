import { VAPI_TOOL_CALLS_PATH } from '../../platform/adapters/dialers/vapi';
import { answerVapiToolCalls, verifyVapiToolCaller } from '../../services/conversations/vapi-tool-calls';
import type { AppDeps } from '../deps';
import type { Routes } from '../route';
import { ErrorBody, validationError } from '../schemas/common';
import { CallbackAccountQuery, VapiHeaders } from '../schemas/telephony-callbacks';
import { VapiToolCallsAnswer, VapiToolCallsBody } from '../schemas/vapi-tool-calls';
import { accountOf } from './telephony-callbacks';

// Vapi's tool calls for the function tools of a campaign call's assistant (webhooks, knowledge base):
// signed as Vapi signs server messages (x-vapi-secret of the account the URL names), no bearer token.

export function registerVapiToolCallRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: VAPI_TOOL_CALLS_PATH,
    tag: 'Campaigns',
    summary: "Vapi's tool-calls of a campaign call's webhook and knowledge-base tools (x-vapi-secret); no bearer token",
    auth: 'public',
    query: CallbackAccountQuery,
    headers: VapiHeaders,
    // Without the secret of the account the URL names, the body is never read.
    beforeBody: async (ctx) => {
      ctx.state.callbackOrg = await verifyVapiToolCaller(deps, ctx.get('x-vapi-secret') || undefined, accountOf(ctx));
    },
    body: VapiToolCallsBody,
    responses: {
      200: { description: 'One result per tool call; a tool that failed or timed out answers with error', schema: VapiToolCallsAnswer },
      401: { description: 'Missing or invalid x-vapi-secret, or an unknown account', schema: ErrorBody },
      403: { description: 'Older than TELEPHONY_CALLBACK_MAX_AGE_SECONDS (a replay)', schema: ErrorBody },
      404: { description: "No campaign call has this attempt key (of the account's organization)", schema: ErrorBody },
      409: { description: 'The call has ended', schema: ErrorBody },
      413: { description: 'Body larger than BODY_LIMIT_BYTES', schema: ErrorBody },
      ...validationError,
      415: { description: 'Body of another media type, or in a charset other than UTF-8', schema: ErrorBody },
      503: { description: 'No account named and Vapi is not the configured dialer', schema: ErrorBody },
    },
    handler: ({ body, ctx }) => answerVapiToolCalls(deps, body.message, ctx.state.callbackOrg as string | null),
  });
}
