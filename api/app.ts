import Koa from 'koa';
import { createAuthenticator } from './auth/authenticator';
import type { AppDeps } from './deps';
import { bodyLimit } from './middleware/errors';
import { clientAddressResolver } from './middleware/client-address';
import { requestLines } from './middleware/request-id';
import { readJsonBody } from './middleware/json-body';
import { requestPipeline } from './middleware/pipeline';
import { routeDispatcher } from './route-dispatch';
import { requestDeadlines } from './middleware/deadlines';
import { methodNotAllowed, serveConnectThroughApp } from './middleware/methods';
import { widgetPreflight } from './middleware/widget-preflight';
import { createRateLimitGuard } from './middleware/rate-limits';
import { createIdempotencyGuard } from './middleware/idempotency';
import { createRegistry, generateDocument } from './openapi-registry';
import { Routes, type BodyReader } from './route';
import { registerDocsRoutes } from './routes/docs';
import { publicBaseUrl } from '../platform/core/config';
import { MAX_REQUEST_HEADER_BYTES } from './request-limits';
import { registerHealthRoutes } from './routes/health';
import { registerIdentityRoutes } from './routes/identity';
import { registerObjectRoutes } from './routes/objects';
import { registerAgentsRoutes } from './routes/agents';
import { registerAgentKnowledgeRoutes } from './routes/agent-knowledge';
import { registerAgentConversationRoutes } from './routes/agent-conversations';
import { registerAgentReplayRoutes } from './routes/agent-replays';
import { registerAccountRoutes } from './routes/accounts';
import { registerActivityRoutes } from './routes/crm-activities';
import { registerDealRoutes } from './routes/deals';
import { registerContactRoutes } from './routes/contacts';
import { registerTagRoutes } from './routes/tags';
import { registerFileRoutes } from './routes/files';
import { registerCampaignRoutes } from './routes/campaigns';
import { registerDoNotCallRoutes } from './routes/do-not-call';
import { registerTelephonyCallbackRoutes } from './routes/telephony-callbacks';
import { registerVapiToolCallRoutes } from './routes/vapi-tool-calls';
import { MEETING_CAPTURE_PATH, registerMeetingRoutes } from './routes/meetings';
import { registerCardRoutes } from './routes/cards';
import { registerCardShareLinkRoutes } from './routes/card-share-links';
import { registerCardEventRoutes } from './routes/card-events';
import { registerCardLeadRoutes } from './routes/card-leads';
import { registerPublicMediaRoutes } from './routes/public-media';
import { registerCredentialRoutes } from './routes/credentials';
import { registerNotificationRoutes } from './routes/notifications';
import { CUSTOM_DATA_BULK_PATH, registerCustomDataRoutes } from './routes/custom-data';

/** Local-storage uploads stream their own bodies (any type, any size the store takes). */
const isUpload = (path: string) => path.startsWith('/storage/objects/');
/** The meeting capture webhook verifies its raw bytes' signature before anything parses them (it bounds its own read). */
const readsOwnBody = (path: string) => isUpload(path) || path === MEETING_CAPTURE_PATH || path === OUTREACH_INBOUND_PATH;

export type AreaRoutes = (routes: Routes, deps: AppDeps) => void;

/** Every area's routes, in the order of the document's tags. */
import { registerIntelligenceRoutes } from './routes/intelligence';
import { registerReadinessRoutes } from './routes/readiness';
import { registerKnowledgeBaseRoutes } from './routes/knowledge-base';
import { registerOutreachSequenceRoutes } from './routes/outreach-sequences';
import { registerOutreachUniboxRoutes } from './routes/outreach-unibox';
import { OUTREACH_INBOUND_PATH, registerOutreachInboundRoutes } from './routes/outreach-inbound';
import { registerOutreachDomainRoutes } from './routes/outreach-domains';
import { registerOutreachMailboxRoutes } from './routes/outreach-mailboxes';
import { registerOutreachSuppressionRoutes } from './routes/outreach-suppressions';
import { registerOutreachUnsubscribeRoutes } from './routes/outreach-unsubscribe';
import { registerIntegrationRoutes } from './routes/integrations';
import { registerSpeechAccountRoutes } from './routes/speech-accounts';
import { registerFeedbackRoutes } from './routes/feedback';
import { registerAiChatRoutes } from './routes/ai-chat';
import { registerAnalyticsAssistantRoutes } from './routes/analytics-assistant';
import { registerWebhookRoutes } from './routes/webhooks';
import { registerWebhookMessageRoutes } from './routes/webhook-messages';

const AREAS: AreaRoutes[] = [
  registerIdentityRoutes,
  registerHealthRoutes,
  registerObjectRoutes,
  registerAccountRoutes,
  registerDealRoutes,
  registerActivityRoutes,
  registerContactRoutes,
  registerTagRoutes,
  registerFileRoutes,
  registerAgentsRoutes,
  registerAgentKnowledgeRoutes,
  registerAgentConversationRoutes,
  registerAgentReplayRoutes,
  registerCampaignRoutes,
  registerDoNotCallRoutes,
  registerTelephonyCallbackRoutes,
  registerVapiToolCallRoutes,
  registerCredentialRoutes,
  registerCustomDataRoutes,
  registerMeetingRoutes,
  registerNotificationRoutes,
  registerCardRoutes,
  registerCardShareLinkRoutes,
  registerCardLeadRoutes,
  registerCardEventRoutes,
  registerPublicMediaRoutes,
  registerIntelligenceRoutes,
  registerReadinessRoutes,
  registerKnowledgeBaseRoutes,
  registerOutreachDomainRoutes,
  registerOutreachMailboxRoutes,
  registerOutreachSuppressionRoutes,
  registerOutreachSequenceRoutes,
  registerOutreachUniboxRoutes,
  registerOutreachInboundRoutes,
  registerOutreachUnsubscribeRoutes,
  registerIntegrationRoutes,
  registerSpeechAccountRoutes,
  registerFeedbackRoutes,
  registerAiChatRoutes,
  registerAnalyticsAssistantRoutes,
  registerWebhookRoutes,
  registerWebhookMessageRoutes,
];

/** The Koa app with every area; tests may add areas of their own (`extraAreas`). */
export function createApp(deps: AppDeps, extraAreas: AreaRoutes[] = []) {
  const registry = createRegistry();
  // Bodies are limited to BODY_LIMIT_BYTES, except routes with a limit of their own (custom data snapshots).
  const limitOf = (path: string) =>
    CUSTOM_DATA_BULK_PATH.test(path) ? deps.config.CUSTOM_DATA_REPLACE_BODY_LIMIT_BYTES : deps.config.BODY_LIMIT_BYTES;
  // A route reads its JSON body itself, once its caller is authenticated and allowed (api/route.ts).
  const readBody: BodyReader = (ctx, own) =>
    readJsonBody(ctx, { limitBytes: Math.min(own ?? Infinity, limitOf(ctx.path)), maxDepth: deps.config.JSON_MAX_DEPTH });
  // Rate limits count every authenticated request; idempotency keys guard the POSTs that create or start something.
  const guards = [createRateLimitGuard(deps, registry), createIdempotencyGuard(deps, registry)];
  const routes = new Routes(registry, createAuthenticator(deps.verifier), readBody, {
    checkResponses: deps.config.NODE_ENV === 'test',
    guards,
  });
  for (const register of [...AREAS, ...extraAreas]) register(routes, deps);
  const document = generateDocument(registry, `${publicBaseUrl(deps.config)}/docs`);
  registerDocsRoutes(routes.router, document, deps.config);

  const app = new Koa({ proxy: false });
  // Errors that reach Koa outside the pipeline (mostly a client dropping its connection mid-body)
  // go to the log, never to stderr through Koa's default handler.
  app.on('error', (err: { code?: string }) => {
    const clientGone = /^(HPE_|ECONNRESET$|EPIPE$|ECONNABORTED$|ERR_STREAM_PREMATURE_CLOSE$)/.test(err?.code ?? '');
    deps.logger[clientGone ? 'debug' : 'warn']({ err }, 'connection error outside a request');
  });
  app.use(
    requestPipeline({
      // Forwarded headers count only from TRUSTED_PROXIES (middleware/client-address.ts), never Koa's blanket trust.
      resolveClientAddress: clientAddressResolver(deps.config.TRUSTED_PROXIES),
      lines: requestLines(deps.logger),
      // The one CORS preflight the API answers (a widget's sessions); OPTIONS is 405 everywhere else.
      preflight: widgetPreflight(deps),
      refuseUndeclaredMethod: methodNotAllowed(routes.router),
      // A declared length over the limit is refused before routing; nothing is read here.
      refuseOversizedBody: bodyLimit(limitOf, readsOwnBody),
      withinDeadlines: requestDeadlines(deps.config.REQUEST_TIMEOUT_MS, deps.config.TEMPORAL_REQUEST_TIMEOUT_MS, isUpload),
      route: routeDispatcher(routes.router, routes.served),
    }),
  );
  serveConnectThroughApp(app, { maxHeaderSize: MAX_REQUEST_HEADER_BYTES });
  return { app, document, routes: routes.declared, router: routes.router };
}
