import { z } from 'zod';
import { MAX_KEY_PROPERTIES, MAX_PROPERTIES, NAME_PATTERN, NAME_RULE, PROPERTY_TYPES } from '../../domain/custom-data';
import { CursorPagination, KeyCursor, NameCursor, cursorQuery } from '../pagination';
import { Timestamp } from './common';

const Name = z.string().regex(NAME_PATTERN, NAME_RULE).openapi({ description: NAME_RULE, example: 'orders' });

export const TableParams = z.object({ name: Name });

export const Property = z
  .strictObject({
    name: Name,
    type: z.enum(PROPERTY_TYPES),
    description: z.string().max(1000).default(''),
  })
  .openapi('CustomDataProperty', { description: 'timestamp: ISO 8601 with an offset; json: any value' });

export const DeclareTableBody = z
  .strictObject({
    key: z.array(Name).min(1).max(MAX_KEY_PROPERTIES).openapi({ description: 'The properties whose values identify a row' }),
    properties: z.array(Property).min(1).max(MAX_PROPERTIES),
    description: z.string().max(2000).optional(),
  })
  .openapi('CustomDataTableDeclaration');

export const Table = z
  .object({
    name: z.string(),
    description: z.string(),
    key: z.array(z.string()),
    properties: z.array(z.object({ name: z.string(), type: z.enum(PROPERTY_TYPES), description: z.string() })),
    view: z.string().openapi({ description: 'schema.view of the live rows with typed columns, for SQL readers' }),
    live_rows: z.number().int(),
    tombstoned_rows: z.number().int(),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: z.string(),
    modified_by: z.string(),
  })
  .openapi('CustomDataTable');

export const TableList = z.object({ data: z.array(Table), pagination: CursorPagination }).openapi('CustomDataTableList');

export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: cursorQuery(NameCursor),
});

export const RowsQuery = PageQuery.extend({
  // A row key may be long (up to eight properties): its cursor gets room, within Node's 16 KiB request line.
  cursor: cursorQuery(KeyCursor, 8000),
  state: z.enum(['live', 'tombstoned', 'all']).default('live').openapi({ description: 'live (default), tombstoned or all rows' }),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const DataRow = z
  .object({
    key: z.record(z.string(), z.unknown()),
    data: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
    updated_at: Timestamp,
    tombstoned_at: Timestamp.nullable(),
  })
  .openapi('CustomDataRow');

export const RowList = z.object({ data: z.array(DataRow), pagination: CursorPagination }).openapi('CustomDataRowList');

export const WriteRowsBody = (maxRows: number) =>
  z
    .strictObject({
      rows: z
        .array(z.record(z.string(), z.unknown()))
        .max(maxRows)
        .openapi({ description: `Objects, at most ${maxRows} (CUSTOM_DATA_REPLACE_MAX_ROWS)` }),
    })
    .openapi('CustomDataRows');

export const WriteReport = z
  .object({
    table: z.string(),
    received: z.number().int(),
    written: z.number().int().openapi({ description: 'Rows inserted, changed or revived' }),
    unchanged: z.number().int(),
    tombstoned: z.number().int(),
    live_before: z.number().int(),
    live_after: z.number().int(),
    warnings: z.array(z.string()).openapi({
      description:
        'Advisory; the write has been applied. Rows lacking a key property are skipped with a warning, but a replace none of whose rows holds the key is refused (422) instead: it would tombstone every live row',
    }),
    type_mismatches: z.record(z.string(), z.number().int()),
    undeclared_properties: z.array(z.string()),
    view: z.string(),
  })
  .openapi('CustomTableReplaceReport');
