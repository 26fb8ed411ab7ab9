import * as knowledge from '../../services/agent-knowledge';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import type { Routes } from '../route';
import { AgentKnowledgeQueryBody, AgentKnowledgeResults } from '../schemas/agent-knowledge';
import { ErrorBody, IdParams, authErrors, notFoundError, validationError } from '../schemas/common';

export function registerAgentKnowledgeRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/core/agents/{id}/knowledge-base/query',
    tag: 'Agents',
    summary: "Retrieve from the agent's knowledge: the datasets its version names, by the knowledge-base query",
    auth: { scope: 'agentsRead' },
    params: IdParams,
    body: AgentKnowledgeQueryBody,
    responses: {
      200: { description: 'Results, best first, across the datasets', schema: AgentKnowledgeResults },
      409: { description: 'No version named and none published', schema: ErrorBody },
      502: { description: 'The embeddings service failed', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => knowledge.queryAgentKnowledge(deps, orgOf(auth), params.id, body),
  });
}
