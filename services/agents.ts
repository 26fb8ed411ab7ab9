import * as agents from '../db/agents';
import { countVersions, recentVersions } from '../db/agent-versions';
import { getSipEndpoint } from '../db/agent-sip';
import { listWidgets } from '../db/agent-widgets';
import { numbersOfAgent } from '../db/phone-numbers';
import { invalid, notFound } from '../domain/errors';
import { removeSip, sipView } from './agent-sip';
import { releaseAgentNumbers } from './inbound-routing';
import { widgetView } from './agent-widgets';
import { agentView, instructionsState, jsonObjectFilter, toBool } from './agent-views';
import type { ServiceDeps } from './deps';
import { CreatedCursor, cursorPage, decodeCursor } from './pagination';
import { iso } from './views';

export const agentNotFound = () => notFound('Agent not found');

export interface AgentListQuery {
  name?: string;
  active?: 'true' | 'false';
  is_demo?: 'true' | 'false';
  metadata?: string;
  created_before?: string;
  created_after?: string;
  updated_before?: string;
  updated_after?: string;
  limit: number;
  cursor?: string;
}

export async function listAgents(deps: Pick<ServiceDeps, 'sql'>, orgId: string, query: AgentListQuery) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const { rows, total } = await agents.listAgents(
    deps.sql,
    orgId,
    {
      name: query.name,
      active: toBool(query.active),
      is_demo: toBool(query.is_demo),
      metadata: jsonObjectFilter('metadata', query.metadata),
      created_before: query.created_before,
      created_after: query.created_after,
      updated_before: query.updated_before,
      updated_after: query.updated_after,
    },
    { limit: query.limit, after },
  );
  const page = cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }));
  return { data: page.data.map(agentView), pagination: page.pagination };
}

export async function createAgent(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  input: Parameters<typeof agents.insertAgent>[2],
) {
  return agentView(await agents.insertAgent(deps.sql, orgId, input, actor));
}

/** The agent with its newest 100 versions, numbers, widgets, SIP state and conversation statistics. */
export async function getAgentDetail(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string) {
  const { sql } = deps;
  const agent = await agents.getAgent(sql, orgId, agentId);
  if (!agent) throw agentNotFound();
  const [versions, versionsTotal, numbers, widgets, sip, stats] = await Promise.all([
    recentVersions(sql, orgId, agent.id, 100),
    countVersions(sql, orgId, agent.id),
    numbersOfAgent(sql, orgId, agent.id),
    listWidgets(sql, orgId, agent.id),
    getSipEndpoint(sql, orgId, agent.id),
    agents.agentStatistics(sql, orgId, agent.id),
  ]);
  return {
    ...agentView(agent),
    versions: versions.map((v) => ({
      version: v.version,
      published: v.published,
      published_at: iso(v.published_at),
      instructions: instructionsState(v),
      created_at: v.created_at.toISOString(),
      updated_at: v.updated_at.toISOString(),
    })),
    versions_total: versionsTotal,
    phone_numbers: numbers.map((n) => ({
      id: n.id,
      number: n.number,
      label: n.label,
      directions: [
        ...(n.inbound_agent_id === agent.id ? (['inbound'] as const) : []),
        ...(n.outbound_agent_id === agent.id ? (['outbound'] as const) : []),
      ],
    })),
    widgets: widgets.map(widgetView),
    sip: sipView(sip),
    statistics: { ...stats, last_conversation_at: iso(stats.last_conversation_at) },
  };
}

export async function updateAgent(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  agentId: string,
  patch: Parameters<typeof agents.updateAgent>[3],
) {
  if (Object.keys(patch).length === 0) throw invalid('Nothing to update');
  const row = await agents.updateAgent(deps.sql, orgId, agentId, patch, actor);
  if (!row) throw agentNotFound();
  return agentView(row);
}

/**
 * Deletes the agent; its SIP endpoint at the provider goes first, and the numbers it answered are put back
 * as they were at their provider (a provider failure is 502 and the agent stays).
 */
export async function deleteAgent(deps: Pick<ServiceDeps, 'sql' | 'config' | 'logger'>, orgId: string, agentId: string): Promise<void> {
  await removeSip(deps, orgId, agentId);
  const deleted = await deps.sql.begin(async (tx) => {
    await releaseAgentNumbers(deps, tx, orgId, agentId);
    return agents.deleteAgent(tx, orgId, agentId);
  });
  if (!deleted) throw agentNotFound();
}
