import { z } from 'zod';
import { GRAINS } from './catalog';

/**
 * A plan: one question as a typed query over the semantic layer. The parser (or a model) produces it;
 * `compilePlan` checks it against the catalog and writes one SELECT over the analytics views.
 *
 * Field paths name an entity's field (`stage`) or a field one join away (`account.industry`).
 * Measures: `count`, `sum:<field>`, `avg:<field>`, `min:<field>`, `max:<field>`, `count_distinct:<field>`,
 * and the rates `win_rate` (deals) and `conversion_rate` (contacts).
 */

const fieldPath = z
  .string()
  .min(1)
  .max(120)
  .regex(/^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/, 'a field such as stage or account.industry');
const scalar = z.union([z.string().max(500), z.number().finite(), z.boolean()]);

export const MEASURE_PATTERN = /^(count|win_rate|conversion_rate|(sum|avg|min|max|count_distinct):[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?)$/;

export const Filter = z.discriminatedUnion('op', [
  z.object({ op: z.enum(['eq', 'neq']), field: fieldPath, value: scalar }).strict(),
  z.object({ op: z.enum(['in', 'not_in']), field: fieldPath, values: z.array(scalar).min(1).max(100) }).strict(),
  z
    .object({ op: z.enum(['gt', 'gte', 'lt', 'lte']), field: fieldPath, value: z.union([z.number().finite(), z.string().max(40)]) })
    .strict(),
  /** Text that holds, starts with or ends with a piece ("a .fr domain", "names starting with C"), case-insensitive. */
  z.object({ op: z.enum(['contains', 'starts_with', 'ends_with']), field: fieldPath, value: z.string().min(1).max(200) }).strict(),
  z.object({ op: z.enum(['is_null', 'not_null']), field: fieldPath }).strict(),
  /**
   * Rows with none (`without`) or at least one (`with`) row of a child entity pointing at them; `where`
   * narrows the child rows counted ("accounts with no won deals": deals whose stage is closed_won; "without an
   * open deal": deals whose stage is not one of the closed ones).
   */
  z
    .object({
      op: z.enum(['without', 'with']),
      entity: z.string().min(1).max(63),
      where: z
        .array(
          z
            .object({
              field: z.string().regex(/^[a-z_][a-z0-9_]*$/),
              op: z.enum(['in', 'not_in']).optional(),
              values: z.array(scalar).min(1).max(100),
            })
            .strict(),
        )
        .max(4)
        .optional(),
    })
    .strict(),
]);
export type Filter = z.infer<typeof Filter>;

export const Plan = z
  .object({
    entity: z.string().min(1).max(63),
    measures: z.array(z.string().regex(MEASURE_PATTERN, 'a measure such as count or sum:value')).max(4).default([]),
    dimensions: z
      .array(z.object({ field: fieldPath, grain: z.enum(GRAINS as [string, ...string[]]).optional() }).strict())
      .max(3)
      .default([]),
    /** For a list (no measures): the fields shown, the entity's name when empty. */
    fields: z.array(fieldPath).max(8).default([]),
    filters: z.array(Filter).max(12).default([]),
    /** Conditions on a measure over each group ("customers who spent more than 1000 in total"). */
    having: z
      .array(
        z
          .object({
            measure: z.string().regex(MEASURE_PATTERN, 'a measure such as count or sum:value'),
            op: z.enum(['gt', 'gte', 'lt', 'lte', 'eq']),
            value: z.number().finite(),
          })
          .strict(),
      )
      .max(3)
      .default([]),
    order: z
      .array(z.object({ by: z.string().min(1).max(120), direction: z.enum(['asc', 'desc']) }).strict())
      .max(3)
      .default([]),
    limit: z.number().int().min(1).max(1000).optional(),
  })
  .strict();
export type Plan = z.infer<typeof Plan>;
export type PlanInput = z.input<typeof Plan>;
