import { z } from 'zod';
import { MAX_SQL_LENGTH } from '../../services/analytics-assistant/guard';

export const QueryBody = z
  .object({
    sql: z
      .string()
      .min(1)
      .max(MAX_SQL_LENGTH)
      .openapi({
        description:
          'One SELECT over the relations GET /analytics-assistant/schema lists (unqualified names are analytics views). ' +
          'Refused, naming the broken rule: several statements, anything but SELECT, INTO, FOR UPDATE/SHARE, data-modifying WITH, ' +
          'other relations, functions or casts outside the allowlist',
        example: 'SELECT stage, count(*) FROM deals GROUP BY stage',
      }),
  })
  .strict()
  .openapi('AnalyticsQuery');

export const QueryColumn = z.object({ name: z.string(), type: z.string().openapi({ description: 'Postgres type, e.g. bigint, text, timestamp with time zone' }) });

export const QueryResult = z
  .object({
    columns: z.array(QueryColumn),
    rows: z.array(z.array(z.unknown())).openapi({ description: 'One array of values per row, in column order; timestamps as ISO 8601, int8 and numeric as text' }),
    row_count: z.int().min(0),
    truncated: z.boolean().openapi({ description: 'True when rows past ANALYTICS_MAX_ROWS or ANALYTICS_MAX_RESULT_BYTES were left out' }),
  })
  .openapi('AnalyticsQueryResult');

export const SchemaColumn = z.object({ name: z.string(), type: z.string(), description: z.string().nullable() });
export const SchemaRelation = z.object({
  name: z.string().openapi({ description: 'What to write in FROM, e.g. analytics.deals or custom_data_<org>.<table>' }),
  kind: z.enum(['crm', 'custom_data']),
  description: z.string().nullable(),
  columns: z.array(SchemaColumn),
});
export const AnalyticsSchema = z.object({ relations: z.array(SchemaRelation) }).openapi('AnalyticsSchema');
