import * as customData from '../../services/custom-data';
import { actor, orgOf, type AuthRule } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, ValidationErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import {
  DeclareTableBody,
  PageQuery,
  RowList,
  RowsQuery,
  Table,
  TableList,
  TableParams,
  WriteReport,
  WriteRowsBody,
} from '../schemas/custom-data';

// Custom data takes the CRM scope groups, like the other organization data.
const READ: AuthRule = { scope: 'crmRead' };
const MANAGE: AuthRule = { scope: 'crmManage' };
const TAG = 'Custom Data';

/** Snapshot writes take a body limit of their own (CUSTOM_DATA_REPLACE_BODY_LIMIT_BYTES), not BODY_LIMIT_BYTES. */
export const CUSTOM_DATA_BULK_PATH = /^\/core\/custom-data\/tables\/[^/]+\/(replace|upsert)$/;

export function registerCustomDataRoutes(routes: Routes, deps: AppDeps): void {
  const writeBody = WriteRowsBody(deps.config.CUSTOM_DATA_REPLACE_MAX_ROWS);
  const bulkFailures = {
    400: {
      description: 'The body holds a lone UTF-16 surrogate escape or is not UTF-8, or a value Postgres cannot store; nothing was written',
      schema: ErrorBody,
    },
    413: {
      description: 'Body over CUSTOM_DATA_REPLACE_BODY_LIMIT_BYTES',
      schema: ErrorBody,
    },
  } as const;

  routes.add({
    method: 'get',
    path: '/core/custom-data/tables',
    tag: TAG,
    summary: "The organization's custom data tables, by name",
    auth: READ,
    query: PageQuery,
    responses: {
      200: { description: 'One page of tables', schema: TableList },
      400: { description: 'Unknown filter or invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => customData.listTables(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'put',
    path: '/core/custom-data/tables/{name}',
    tag: TAG,
    summary: 'Declare a table (create or redeclare): key, typed properties, description; its view follows',
    auth: MANAGE,
    params: TableParams,
    body: DeclareTableBody,
    responses: {
      200: { description: 'The table as declared', schema: Table },
      400: { description: 'A key property not declared, of type json, or named twice', schema: ErrorBody },
      ...authErrors,
      409: { description: 'The key of a table with rows cannot change', schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ params, body, auth }) => customData.declareTable(deps, orgOf(auth), actor(auth), params.name, body),
  });

  routes.add({
    method: 'get',
    path: '/core/custom-data/tables/{name}',
    tag: TAG,
    summary: 'One table with its row counts',
    auth: READ,
    params: TableParams,
    responses: { 200: { description: 'The table', schema: Table }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => customData.getTable(deps, orgOf(auth), params.name),
  });

  routes.add({
    method: 'delete',
    path: '/core/custom-data/tables/{name}',
    tag: TAG,
    summary: 'Delete a table, its rows and its view',
    auth: MANAGE,
    params: TableParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      await customData.deleteTable(deps, orgOf(auth), params.name);
      return reply(204);
    },
  });

  routes.add({
    method: 'get',
    path: '/core/custom-data/tables/{name}/rows',
    tag: TAG,
    summary: "A table's rows by key: live by default, tombstoned or all on request",
    auth: READ,
    params: TableParams,
    query: RowsQuery,
    responses: {
      200: { description: 'One page of rows', schema: RowList },
      400: { description: 'Unknown filter, invalid state or cursor', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, query, auth }) => customData.listRows(deps, orgOf(auth), params.name, query),
  });

  routes.add({
    method: 'post',
    path: '/core/custom-data/tables/{name}/replace',
    tag: TAG,
    summary: 'Replace the table by a snapshot: rows absent from it are tombstoned, returning keys revive',
    description:
      'Rows lacking a key property are skipped (a warning in the report). When rows are sent but none holds every key ' +
      'property, the replace is refused with 422 (loc `body.rows`) and nothing is applied: it would tombstone every live ' +
      'row. `rows: []` is the deliberate way to empty a table: every live row is tombstoned.',
    auth: MANAGE,
    params: TableParams,
    body: writeBody,
    responses: {
      200: { description: 'The replace report', schema: WriteReport },
      ...bulkFailures,
      ...authErrors,
      ...notFoundError,
      422: {
        description: 'Validation failed, or rows were sent but none holds every key property (nothing applied)',
        schema: ValidationErrorBody,
      },
    },
    handler: async ({ params, body, auth }) => customData.writeRows(deps, orgOf(auth), params.name, body.rows, 'replace'),
  });

  routes.add({
    method: 'post',
    path: '/core/custom-data/tables/{name}/upsert',
    tag: TAG,
    summary: 'Write some rows (inserted, changed or revived); absent rows are left alone',
    auth: MANAGE,
    params: TableParams,
    body: writeBody,
    responses: {
      200: { description: 'The write report (tombstoned is always 0)', schema: WriteReport },
      ...bulkFailures,
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => customData.writeRows(deps, orgOf(auth), params.name, body.rows, 'upsert'),
  });
}
