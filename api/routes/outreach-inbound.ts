import * as inbound from '../../services/outreach/inbound';
import type { AppDeps } from '../deps';
import { readRawBody } from '../middleware/raw-body';
import { reply, type Routes } from '../route';
import { ErrorBody } from '../schemas/common';
import { InboundAnswer, InboundBody, InboundHeaders } from '../schemas/outreach-unibox';

export const OUTREACH_INBOUND_PATH = '/outreach/inbound-mail';

export function registerOutreachInboundRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: OUTREACH_INBOUND_PATH,
    tag: 'Outreach',
    summary: 'Received mail from the mail server (a raw RFC 822 message, signed with Standard Webhooks); no bearer token',
    auth: 'public',
    documented: { body: InboundBody, headers: InboundHeaders, bodyContentTypes: ['message/rfc822', 'text/plain'] },
    responses: {
      200: { description: 'Placed in its thread (a redelivered Message-ID is acknowledged without a second copy)', schema: InboundAnswer },
      202: { description: 'Verified, but it answers no thread of the service: ignored', schema: InboundAnswer },
      400: {
        description: 'Missing or invalid signature, or a timestamp more than five minutes off; nothing else was read',
        schema: ErrorBody,
      },
      413: { description: 'Body larger than BODY_LIMIT_BYTES', schema: ErrorBody },
      503: { description: 'No signing secret configured: every request is refused', schema: ErrorBody },
    },
    handler: async ({ ctx }) => {
      const raw = await inbound.verifyInbound(deps, () => readRawBody(ctx, deps.config.BODY_LIMIT_BYTES), ctx.headers);
      const result = await inbound.receiveMessage(deps, raw);
      return reply(result.matched ? 200 : 202, result);
    },
  });
}
