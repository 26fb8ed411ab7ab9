import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import { createAuthenticator } from './auth/authenticator';
import type { AppDeps } from './deps';
import { HttpError } from './errors';
import { bodyLimit, errorHandler, notFound } from './middleware/errors';
import { requestId } from './middleware/request-id';
import { createRegistry, generateDocument } from './openapi-registry';
import { Routes } from './route';
import { registerDocsRoutes } from './routes/docs';
import { registerHealthRoutes } from './routes/health';
import { registerIdentityRoutes } from './routes/identity';
import { registerObjectRoutes } from './routes/objects';
import { registerAgentsRoutes } from './routes/agents';
import { registerAccountRoutes } from './routes/accounts';
import { registerActivityRoutes } from './routes/activities';
import { registerDealRoutes } from './routes/deals';
import { registerContactRoutes } from './routes/contacts';
import { registerTagRoutes } from './routes/tags';
import { registerFileRoutes } from './routes/files';
import { registerCampaignRoutes } from './routes/campaigns';

/** Local-storage uploads stream their own bodies (any type, any size the store takes). */
const isUpload = (path: string) => path.startsWith('/storage/objects/');

export type AreaRoutes = (routes: Routes, deps: AppDeps) => void;

/** Every area's routes, in the order of the spec's tags. */
const AREAS: AreaRoutes[] = [registerIdentityRoutes, registerHealthRoutes, registerObjectRoutes, registerAccountRoutes, registerDealRoutes, registerActivityRoutes, registerContactRoutes, registerTagRoutes, registerFileRoutes, registerAgentsRoutes, registerCampaignRoutes];

/** The Koa app with every area; tests may add areas of their own (`extraAreas`). */
export function createApp(deps: AppDeps, extraAreas: AreaRoutes[] = []) {
  const registry = createRegistry();
  const routes = new Routes(registry, createAuthenticator(deps.verifier));
  for (const register of [...AREAS, ...extraAreas]) register(routes, deps);
  const document = generateDocument(registry);
  registerDocsRoutes(routes.router, document);

  const app = new Koa({ proxy: true });
  app.use(requestId(deps.logger));
  app.use(errorHandler());
  app.use(notFound());
  app.use(bodyLimit(deps.config.BODY_LIMIT_BYTES, isUpload));
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: deps.config.BODY_LIMIT_BYTES, encoding: 'utf-8' }));
  app.use(routes.router.routes());
  app.use(routes.router.allowedMethods({ throw: true, methodNotAllowed: () => new HttpError(405, 'Method Not Allowed') }));
  return { app, document, routes: routes.declared };
}
