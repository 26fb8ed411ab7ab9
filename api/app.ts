import Koa from 'koa';
import { createAuthenticator } from './auth/authenticator';
import type { AppDeps } from './deps';
import { bodyLimit, errorHandler, notFound } from './middleware/errors';
import { requestId } from './middleware/request-id';
import { jsonBody } from './middleware/json-body';
import { temporalDeadline } from './middleware/deadlines';
import { methodNotAllowed, serveConnectThroughApp } from './middleware/methods';
import { createRegistry, generateDocument } from './openapi-registry';
import { Routes } from './route';
import { registerDocsRoutes } from './routes/docs';
import { registerHealthRoutes } from './routes/health';
import { registerIdentityRoutes } from './routes/identity';
import { registerObjectRoutes } from './routes/objects';
import { registerAgentsRoutes } from './routes/agents';
import { registerAgentKnowledgeRoutes } from './routes/agent-knowledge';
import { registerAccountRoutes } from './routes/accounts';
import { registerActivityRoutes } from './routes/activities';
import { registerDealRoutes } from './routes/deals';
import { registerContactRoutes } from './routes/contacts';
import { registerTagRoutes } from './routes/tags';
import { registerFileRoutes } from './routes/files';
import { registerCampaignRoutes } from './routes/campaigns';
import { MEETING_CAPTURE_PATH, registerMeetingRoutes } from './routes/meetings';
import { registerCardRoutes } from './routes/cards';
import { registerCardShareLinkRoutes } from './routes/card-share-links';
import { registerCardEventRoutes } from './routes/card-events';
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
import { registerIntegrationRoutes } from './routes/integrations';
import { registerFeedbackRoutes } from './routes/feedback';

const AREAS: AreaRoutes[] = [registerIdentityRoutes, registerHealthRoutes, registerObjectRoutes, registerAccountRoutes, registerDealRoutes, registerActivityRoutes, registerContactRoutes, registerTagRoutes, registerFileRoutes, registerAgentsRoutes, registerAgentKnowledgeRoutes, registerCampaignRoutes, registerCredentialRoutes, registerCustomDataRoutes, registerMeetingRoutes, registerNotificationRoutes, registerCardRoutes, registerCardShareLinkRoutes, registerCardEventRoutes, registerPublicMediaRoutes, registerIntelligenceRoutes, registerReadinessRoutes, registerKnowledgeBaseRoutes, registerOutreachDomainRoutes, registerOutreachMailboxRoutes, registerOutreachSequenceRoutes, registerOutreachUniboxRoutes, registerOutreachInboundRoutes, registerIntegrationRoutes, registerFeedbackRoutes];

/** The Koa app with every area; tests may add areas of their own (`extraAreas`). */
export function createApp(deps: AppDeps, extraAreas: AreaRoutes[] = []) {
  const registry = createRegistry();
  const routes = new Routes(registry, createAuthenticator(deps.verifier), { checkResponses: deps.config.NODE_ENV === 'test' });
  for (const register of [...AREAS, ...extraAreas]) register(routes, deps);
  const document = generateDocument(registry);
  registerDocsRoutes(routes.router, document);

  const app = new Koa({ proxy: true });
  app.use(requestId(deps.logger));
  app.use(errorHandler());
  app.use(notFound());
  app.use(methodNotAllowed(routes.router));
  // Bodies are limited to BODY_LIMIT_BYTES, except routes with a limit of their own (custom data snapshots).
  const limited = (limitBytes: number): Koa.Middleware => {
    const check = bodyLimit(limitBytes, readsOwnBody);
    const read = jsonBody({ limitBytes, maxDepth: deps.config.JSON_MAX_DEPTH });
    return (ctx, next) => check(ctx, () => read(ctx, next));
  };
  const ordinaryBody = limited(deps.config.BODY_LIMIT_BYTES);
  const bulkBody = limited(deps.config.CUSTOM_DATA_REPLACE_BODY_LIMIT_BYTES);
  app.use((ctx, next) => (CUSTOM_DATA_BULK_PATH.test(ctx.path) ? bulkBody : ordinaryBody)(ctx, next));
  app.use(temporalDeadline(deps.config.TEMPORAL_REQUEST_TIMEOUT_MS));
  app.use(routes.router.routes());
  serveConnectThroughApp(app);
  return { app, document, routes: routes.declared };
}
