import { z } from 'zod';
import { RESULTS_COUNT_MAX } from '../../domain/knowledge-base';
import { Uuid } from './common';
import { QueryResults, QueryText, ResultsCount } from './knowledge-base';

export const AgentKnowledgeQueryBody = z
  .strictObject({
    query: QueryText,
    results_count: ResultsCount.optional().openapi({
      description: `Default: the version's knowledge_base.results_count (5 when unset); at most ${RESULTS_COUNT_MAX}`,
    }),
    version: z.number().int().min(1).max(2147483647).optional().openapi({ description: 'Default: the published version' }),
  })
  .openapi('AgentKnowledgeQuery');

export const AgentKnowledgeResults = QueryResults.extend({
  version: z.number().int().openapi({ description: 'The version whose datasets were searched' }),
  dataset_ids: z.array(Uuid).openapi({ description: 'Datasets searched, in the order the version names them' }),
  skipped_dataset_ids: z.array(Uuid).openapi({ description: 'Datasets the version names that no longer exist' }),
}).openapi('AgentKnowledgeResults');
