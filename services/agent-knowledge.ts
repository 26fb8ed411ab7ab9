import * as agents from '../db/agents';
import * as versions from '../db/agent-versions';
import { datasetIdsOf, resultsCountOf } from '../domain/agent-knowledge';
import { conflict, isDomainError, notFound } from '../domain/errors';
import type { ServiceDeps } from './deps';
import { queryDataset } from './knowledge-base/query';

export interface AgentKnowledgeQuery {
  query: string;
  results_count?: number;
  version?: number;
}

/**
 * What an agent finds in its knowledge: the same hybrid retrieval as a dataset query
 * (`queryDataset`), over every dataset the version names, merged by score. Scores of different
 * datasets are comparable (each in [0, 1], 1 for a dataset's nearest match holding every query word); ties keep the datasets' order in the config.
 * A dataset deleted since the version was saved is skipped and named, never an error: a published
 * version is immutable and must keep answering.
 */
export async function queryAgentKnowledge(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  agentId: string,
  input: AgentKnowledgeQuery,
) {
  const agent = await agents.getAgent(deps.sql, orgId, agentId);
  if (!agent) throw notFound('Agent not found');
  const number = input.version ?? agent.published_version;
  if (number === null) throw conflict('The agent has no published version; name a version');
  const version = await versions.getVersion(deps.sql, orgId, agentId, number);
  if (!version) throw notFound('Version not found');

  const datasetIds = datasetIdsOf(version.config);
  const count = input.results_count ?? resultsCountOf(version.config);
  const searched: string[] = [];
  const skipped: string[] = [];
  const results = [];
  for (const datasetId of datasetIds) {
    try {
      results.push(...(await queryDataset(deps, orgId, datasetId, { query: input.query, results_count: count })).results);
      searched.push(datasetId);
    } catch (error) {
      if (!isDomainError(error, 'not_found')) throw error;
      skipped.push(datasetId);
    }
  }
  // Array.prototype.sort is stable: equal scores keep dataset order, then each dataset's own order.
  results.sort((a, b) => b.score - a.score);
  return { version: number, dataset_ids: searched, skipped_dataset_ids: skipped, results: results.slice(0, count) };
}
