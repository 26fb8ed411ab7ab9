import * as datasets from '../../services/knowledge-base/datasets';
import { queryDataset } from '../../services/knowledge-base/query';
import * as sources from '../../services/knowledge-base/sources';
import { actor, orgOf, type AuthRule } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError, workflowUnavailable } from '../schemas/common';
import {
  AttachResult,
  CreateDatasetBody,
  CreateSourceBody,
  Dataset,
  DatasetDetail,
  DatasetList,
  DatasetListQuery,
  DatasetParams,
  DatasetSourceParams,
  PatchDatasetBody,
  PatternBody,
  PatternResult,
  PatternSearchQuery,
  QueryBody,
  QueryResults,
  Source,
  SourceList,
  SourceParams,
} from '../schemas/knowledge-base';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.

const READ: AuthRule = { scope: 'crmRead' };
const MANAGE: AuthRule = { scope: 'crmManage' };
const TAG = 'Knowledge Bases' as const;
const busy = { 409: { description: 'The source is being ingested, or the file is not uploaded yet', schema: ErrorBody } } as const;

export function registerKnowledgeBaseRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/knowledge-base/datasets',
    tag: TAG,
    summary: 'Create a dataset with its default chunking strategy',
    auth: MANAGE,
    body: CreateDatasetBody,
    responses: { 200: { description: 'Created', schema: Dataset }, ...authErrors, ...validationError },
    handler: async ({ body, auth }) => datasets.createDataset(deps, orgOf(auth), actor(auth), body),
  });
  routes.add({
    method: 'get',
    path: '/knowledge-base/datasets',
    tag: TAG,
    summary: 'Datasets, newest first',
    auth: READ,
    query: DatasetListQuery,
    responses: { 200: { description: 'A page of datasets and the total count', schema: DatasetList }, ...authErrors, ...validationError },
    handler: async ({ query, auth }) => datasets.listDatasets(deps, orgOf(auth), query),
  });
  routes.add({
    method: 'get',
    path: '/knowledge-base/datasets/{dataset_id}',
    tag: TAG,
    summary: 'One dataset with the ids of its sources',
    auth: READ,
    params: DatasetParams,
    responses: { 200: { description: 'The dataset', schema: DatasetDetail }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => datasets.getDataset(deps, orgOf(auth), params.dataset_id),
  });
  routes.add({
    method: 'patch',
    path: '/knowledge-base/datasets/{dataset_id}',
    tag: TAG,
    summary: 'Rename, describe or change the default chunking of a dataset',
    auth: MANAGE,
    params: DatasetParams,
    body: PatchDatasetBody,
    responses: { 200: { description: 'The updated dataset', schema: Dataset }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, body, auth }) => datasets.updateDataset(deps, orgOf(auth), actor(auth), params.dataset_id, body),
  });
  routes.add({
    method: 'delete',
    path: '/knowledge-base/datasets/{dataset_id}',
    tag: TAG,
    summary: 'Delete a dataset (its sources stay)',
    auth: MANAGE,
    params: DatasetParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      await datasets.deleteDataset(deps, orgOf(auth), params.dataset_id);
      return reply(204);
    },
  });
  routes.add({
    method: 'get',
    path: '/knowledge-base/datasets/{dataset_id}/sources',
    tag: TAG,
    summary: 'The sources attached to a dataset, in the order attached',
    auth: READ,
    params: DatasetParams,
    responses: { 200: { description: 'Sources', schema: SourceList }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => datasets.listDatasetSources(deps, orgOf(auth), params.dataset_id),
  });
  routes.add({
    method: 'put',
    path: '/knowledge-base/datasets/{dataset_id}/sources/{source_id}',
    tag: TAG,
    summary: 'Attach a source to a dataset (idempotent)',
    auth: MANAGE,
    params: DatasetSourceParams,
    responses: {
      200: { description: 'attached is false when it already was', schema: AttachResult },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, auth }) => datasets.attachSource(deps, orgOf(auth), params.dataset_id, params.source_id),
  });
  routes.add({
    method: 'delete',
    path: '/knowledge-base/datasets/{dataset_id}/sources/{source_id}',
    tag: TAG,
    summary: 'Detach a source from a dataset',
    auth: MANAGE,
    params: DatasetSourceParams,
    responses: { 204: { description: 'Detached' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      await datasets.detachSource(deps, orgOf(auth), params.dataset_id, params.source_id);
      return reply(204);
    },
  });
  routes.add({
    method: 'post',
    path: '/knowledge-base/datasets/{dataset_id}/sources/pattern',
    tag: TAG,
    summary: 'Attach every source of the organization whose name matches the pattern (% wildcard, case-insensitive) and type',
    auth: MANAGE,
    params: DatasetParams,
    body: PatternBody,
    responses: {
      200: { description: 'How many matched, which were attached and which already were', schema: PatternResult },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => datasets.attachByPattern(deps, orgOf(auth), params.dataset_id, body),
  });
  routes.add({
    method: 'post',
    path: '/knowledge-base/datasets/{dataset_id}/query',
    tag: TAG,
    summary: "Hybrid retrieval (full text + vector in the dataset's embedding space, fused by score) over the ready sources of the dataset",
    auth: READ,
    params: DatasetParams,
    body: QueryBody,
    responses: {
      200: { description: 'Results, best first', schema: QueryResults },
      502: { description: 'The embeddings service failed', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => queryDataset(deps, orgOf(auth), params.dataset_id, body),
  });

  routes.add({
    method: 'post',
    path: '/knowledge-base/sources',
    tag: TAG,
    summary: 'Create a URL or FILE source and start its ingestion (kb-source:<id>)',
    auth: MANAGE,
    body: CreateSourceBody,
    responses: {
      202: { description: 'Created, ingestion started (status pending)', schema: Source },
      ...busy,
      ...workflowUnavailable,
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(202, await sources.createSource(deps, orgOf(auth), actor(auth), body)),
  });
  routes.add({
    method: 'get',
    path: '/knowledge-base/sources/pattern-search',
    tag: TAG,
    summary: 'Sources by name pattern (name_pattern, % wildcard, case-insensitive) and type, by name',
    auth: READ,
    query: PatternSearchQuery,
    responses: {
      200: { description: 'A page of sources and the total count of matches', schema: SourceList },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => sources.searchSources(deps, orgOf(auth), query),
  });
  routes.add({
    method: 'get',
    path: '/knowledge-base/sources',
    tag: TAG,
    summary: 'Sources by name (same filters as pattern-search)',
    auth: READ,
    query: PatternSearchQuery,
    responses: { 200: { description: 'A page of sources and the total count', schema: SourceList }, ...authErrors, ...validationError },
    handler: async ({ query, auth }) => sources.searchSources(deps, orgOf(auth), query),
  });
  routes.add({
    method: 'get',
    path: '/knowledge-base/sources/{source_id}',
    tag: TAG,
    summary: 'One source with its ingestion status',
    auth: READ,
    params: SourceParams,
    responses: { 200: { description: 'The source', schema: Source }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => sources.getSource(deps, orgOf(auth), params.source_id),
  });
  routes.add({
    method: 'post',
    path: '/knowledge-base/sources/{source_id}/reingest',
    tag: TAG,
    summary: 'Ingest the source again; its chunks are replaced atomically when the new ones are ready',
    auth: MANAGE,
    params: SourceParams,
    responses: {
      202: { description: 'Ingestion started', schema: Source },
      ...busy,
      ...workflowUnavailable,
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, auth }) => reply(202, await sources.reingestSource(deps, orgOf(auth), actor(auth), params.source_id)),
  });
  routes.add({
    method: 'delete',
    path: '/knowledge-base/sources/{source_id}',
    tag: TAG,
    summary: 'Delete a source, its chunks and its dataset memberships',
    auth: MANAGE,
    params: SourceParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      await sources.deleteSource(deps, orgOf(auth), params.source_id);
      return reply(204);
    },
  });
}
