import * as runner from '../../services/analytics-assistant/query-runner';
import * as schema from '../../services/analytics-assistant/schema';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { AnalyticsSchema, QueryBody, QueryResult } from '../schemas/analytics-assistant';
import { ErrorBody, authErrors, validationError } from '../schemas/common';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.

const tag = 'Analytics Assistant' as const;

export function registerAnalyticsAssistantRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/analytics-assistant/schema',
    tag,
    summary: "The relations and columns the caller's queries may read: the CRM views and the organization's custom-data views",
    auth: { scope: 'dataAccess' },
    responses: { 200: { description: 'Readable relations with their columns and descriptions', schema: AnalyticsSchema }, ...authErrors },
    handler: async ({ auth }) => reply(200, { relations: await schema.readableSchema(deps, orgOf(auth)) }),
  });

  routes.add({
    method: 'post',
    path: '/analytics-assistant/query',
    tag,
    summary: "Run one read-only SELECT over the organization's own rows (parser guard, then a least-privilege role in a READ ONLY transaction)",
    auth: { scope: 'dataAccess' },
    body: QueryBody,
    responses: {
      200: { description: 'The result, at most ANALYTICS_MAX_ROWS rows and ANALYTICS_MAX_RESULT_BYTES', schema: QueryResult },
      400: { description: 'Refused by a guard rule (named), a database error the statement caused, or past ANALYTICS_STATEMENT_TIMEOUT_MS', schema: ErrorBody },
      502: { description: 'The analytics database role could not connect, or the database failed', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(200, await runner.runQuery(deps, orgOf(auth), body.sql)),
  });
}
