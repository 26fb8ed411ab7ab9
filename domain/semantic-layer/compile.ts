import { type Catalog, type EntityDef, type FieldDef, quoteIdent } from './catalog';
import { type Filter, MEASURE_PATTERN, type Plan } from './plan';

/** A plan the catalog cannot express: the parser asks again, a model is told why. */
export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanError';
  }
}

export interface CompiledPlan {
  sql: string;
  /** Column names of the result, in order. */
  columns: string[];
}

/** A string literal: quotes doubled (standard_conforming_strings is on), NUL removed. */
export const literal = (value: string) => `'${value.replace(/\0/g, '').replace(/'/g, "''")}'`;

const scalarSql = (value: string | number | boolean) =>
  typeof value === 'number'
    ? Number.isFinite(value)
      ? String(value)
      : 'NULL'
    : typeof value === 'boolean'
      ? String(value)
      : literal(value);

interface Resolved {
  def: FieldDef;
  /** SQL with the entity's alias replaced by the join's. */
  sql: string;
  /** The alias of the join it needs, if any. */
  join: string | null;
  name: string;
}

/**
 * Compiles a plan to one SELECT over the views of the catalog. Everything the SQL names comes from the
 * catalog (never from the plan's strings); values become quoted literals. The statement still goes
 * through the parser guard and runs as the least-privilege reader.
 */
export function compilePlan(plan: Plan, catalog: Catalog): CompiledPlan {
  const entity = catalog[plan.entity];
  if (!entity) throw new PlanError(`Unknown entity ${plan.entity}`);
  const joins = new Set<string>();
  const resolve = (path: string): Resolved => {
    const [head, tail] = path.includes('.') ? (path.split('.') as [string, string]) : [null, path];
    if (head === null) {
      const def = entity.fields[tail];
      if (!def) throw new PlanError(`${entity.name} have no field ${tail}`);
      return { def, sql: def.sql, join: null, name: tail };
    }
    const join = entity.joins[head];
    if (!join) throw new PlanError(`${entity.name} do not join ${head}`);
    const target = catalog[join.entity]!;
    const def = target.fields[tail];
    if (!def) throw new PlanError(`${target.name} have no field ${tail}`);
    joins.add(head);
    return { def, sql: def.sql.replace(/\bt\./g, `${head}.`), join: head, name: `${head}_${tail}` };
  };

  const select: string[] = [];
  const columns: string[] = [];
  const groupBy: string[] = [];
  const named = new Map<string, string>();
  let lateralTag: string | null = null;
  const add = (expr: string, name: string, group: boolean) => {
    let alias = name;
    for (let n = 2; columns.includes(alias); n++) alias = `${name}_${n}`;
    select.push(`${expr} AS ${quoteIdent(alias)}`);
    columns.push(alias);
    if (group) groupBy.push(expr);
    return alias;
  };

  for (const dimension of plan.dimensions) {
    const field = resolve(dimension.field);
    if (field.def.groupable === false) throw new PlanError(`${dimension.field} is free text: it cannot be grouped by`);
    if (field.def.type === 'tags') {
      if (lateralTag) throw new PlanError('One tag dimension at a time');
      lateralTag = `CROSS JOIN LATERAL unnest(${field.sql}) AS tag(name)`;
      named.set(dimension.field, add('tag.name', 'tag', true));
      continue;
    }
    if (dimension.grain) {
      if (field.def.type !== 'date') throw new PlanError(`${dimension.field} is not a date: it has no ${dimension.grain}`);
      const expr = `date_trunc(${literal(dimension.grain)}, ${field.sql})::date`;
      named.set(`${dimension.field}:${dimension.grain}`, add(expr, `${dimension.grain}`, true));
      named.set(dimension.field, columns[columns.length - 1]!);
      continue;
    }
    named.set(dimension.field, add(field.sql, field.name, true));
  }

  for (const measure of plan.measures) named.set(measure, add(measureSql(measure, entity, resolve), measureName(measure), false));

  if (plan.measures.length === 0 && plan.dimensions.length === 0) {
    const fields = plan.fields.length ? plan.fields : [entity.label];
    for (const path of fields) {
      const field = resolve(path);
      if (field.def.type === 'tags') named.set(path, add(`array_to_string(${field.sql}, ', ')`, field.name, false));
      else named.set(path, add(field.sql, field.name, false));
    }
  } else if (plan.fields.length) {
    throw new PlanError('Fields are listed only when nothing is counted or grouped');
  }

  const where = plan.filters.map((f) => filterSql(f, entity, catalog, resolve));

  const having = plan.having.map((h) => `${measureSql(h.measure, entity, resolve)} ${COMPARE[h.op]} ${h.value}`);
  if (having.length && !plan.dimensions.length) throw new PlanError('A condition on a total needs something to group by');

  const order: string[] = [];
  for (const o of plan.order) {
    const alias = named.get(o.by);
    const grouped = plan.measures.length > 0 || plan.dimensions.length > 0;
    // A measure may order the groups without being shown ("which account has the most deals": its name only).
    const expr = alias
      ? quoteIdent(alias)
      : grouped
        ? MEASURE_PATTERN.test(o.by) && plan.dimensions.length
          ? measureSql(o.by, entity, resolve)
          : null
        : resolve(o.by).sql;
    if (!expr) throw new PlanError(`Cannot order by ${o.by}: it is not in the result`);
    order.push(`${expr} ${o.direction.toUpperCase()} NULLS LAST`);
  }

  const from = [`FROM ${entity.relation} AS t`];
  for (const name of joins) {
    const join = entity.joins[name]!;
    from.push(
      `LEFT JOIN ${catalog[join.entity]!.relation} AS ${name} ON ${name}.${quoteIdent(join.targetKey ?? 'id')} = t.${quoteIdent(join.foreignKey)}`,
    );
  }
  if (lateralTag) from.push(lateralTag);

  const sql = [
    `SELECT ${select.join(', ')}`,
    ...from,
    ...(where.length ? [`WHERE ${where.join(' AND ')}`] : []),
    ...(groupBy.length ? [`GROUP BY ${groupBy.join(', ')}`] : []),
    ...(having.length ? [`HAVING ${having.join(' AND ')}`] : []),
    ...(order.length ? [`ORDER BY ${order.join(', ')}`] : []),
    ...(plan.limit ? [`LIMIT ${plan.limit}`] : []),
  ].join('\n');
  return { sql, columns };
}

export function measureName(measure: string): string {
  if (measure === 'count') return 'count';
  if (!measure.includes(':')) return measure;
  const [fn, path] = measure.split(':') as [string, string];
  const field = path.replace('.', '_');
  return fn === 'sum' ? `total_${field}` : fn === 'count_distinct' ? `distinct_${field}` : `${fn}_${field}`;
}

function measureSql(measure: string, entity: EntityDef, resolve: (path: string) => Resolved): string {
  if (measure === 'count') return 'count(*)';
  if (measure === 'win_rate') {
    if (entity.name !== 'deals') throw new PlanError('The win rate is a measure of deals');
    return "round(count(*) FILTER (WHERE t.stage = 'closed_won')::numeric / nullif(count(*) FILTER (WHERE t.stage IN ('closed_won', 'closed_lost')), 0), 4)";
  }
  if (measure === 'conversion_rate') {
    if (entity.name !== 'contacts') throw new PlanError('The conversion rate is a measure of contacts');
    return "round(count(*) FILTER (WHERE t.stage = 'converted')::numeric / nullif(count(*), 0), 4)";
  }
  const [fn, path] = measure.split(':') as [string, string];
  const field = resolve(path);
  if (fn === 'count_distinct') return `count(DISTINCT ${field.sql})`;
  if (field.def.type !== 'number' && field.def.type !== 'money' && !(fn !== 'sum' && fn !== 'avg' && field.def.type === 'date'))
    throw new PlanError(`${path} is not a number: it has no ${fn}`);
  if (fn === 'avg') return `round(avg(${field.sql}), 2)`;
  return `${fn}(${field.sql})`;
}

const COMPARE: Record<string, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=', eq: '=', neq: '<>' };

function filterSql(filter: Filter, entity: EntityDef, catalog: Catalog, resolve: (path: string) => Resolved): string {
  if ('entity' in filter) {
    const foreignKey = entity.children[filter.entity];
    if (!foreignKey) throw new PlanError(`${filter.entity} do not belong to ${entity.name}`);
    const child = catalog[filter.entity]!;
    const where = (filter.where ?? []).map((w) => {
      const field = child.fields[w.field];
      if (!field) throw new PlanError(`${filter.entity} have no field ${w.field}`);
      // The child's columns are written for alias t; inside the subquery the child is c.
      const column = field.sql.replace(/\bt\./g, 'c.');
      const list = w.values.map(scalarSql).join(', ');
      return w.op === 'not_in' ? ` AND (${column} NOT IN (${list}) OR ${column} IS NULL)` : ` AND ${column} IN (${list})`;
    });
    const exists = `EXISTS (SELECT 1 FROM ${child.relation} AS c WHERE c.${foreignKey} = t.id${where.join('')})`;
    return filter.op === 'without' ? `NOT ${exists}` : exists;
  }
  const { sql, def } = resolve(filter.field);
  switch (filter.op) {
    case 'is_null':
      return def.type === 'tags' ? `cardinality(${sql}) = 0` : `${sql} IS NULL`;
    case 'not_null':
      return def.type === 'tags' ? `cardinality(${sql}) > 0` : `${sql} IS NOT NULL`;
    case 'contains':
    case 'starts_with':
    case 'ends_with': {
      const piece = escapeLike(filter.value);
      const pattern = literal(filter.op === 'starts_with' ? `${piece}%` : filter.op === 'ends_with' ? `%${piece}` : `%${piece}%`);
      return def.type === 'tags' ? `EXISTS (SELECT 1 FROM unnest(${sql}) AS x(v) WHERE x.v ILIKE ${pattern})` : `${sql} ILIKE ${pattern}`;
    }
    case 'in':
    case 'not_in': {
      if (def.type === 'tags') {
        const any = filter.values.map((v) => `${scalarSql(String(v))} = ANY(${sql})`).join(' OR ');
        return filter.op === 'in' ? `(${any})` : `NOT (${any})`;
      }
      const list = filter.values.map((v) => scalarSql(typedValue(v, def.type))).join(', ');
      return filter.op === 'in' ? `${sql} IN (${list})` : `(${sql} NOT IN (${list}) OR ${sql} IS NULL)`;
    }
    case 'eq':
    case 'neq': {
      if (def.type === 'tags')
        return filter.op === 'eq'
          ? `${scalarSql(String(filter.value))} = ANY(${sql})`
          : `NOT (${scalarSql(String(filter.value))} = ANY(${sql}))`;
      const value = scalarSql(typedValue(filter.value, def.type));
      return filter.op === 'eq' ? `${sql} = ${value}` : `${sql} IS DISTINCT FROM ${value}`;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (def.type === 'date') {
        if (typeof filter.value !== 'string' || !/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(filter.value))
          throw new PlanError(`${filter.field} is a date: compare it with a date such as 2025-01-31`);
        return `${sql} ${COMPARE[filter.op]} ${literal(filter.value)}`;
      }
      if (def.type !== 'number' && def.type !== 'money') throw new PlanError(`${filter.field} is not a number or a date`);
      const n = Number(filter.value);
      if (!Number.isFinite(n)) throw new PlanError(`${filter.field} compares with a number`);
      return `${sql} ${COMPARE[filter.op]} ${n}`;
    }
  }
  throw new PlanError('Unknown filter');
}

function typedValue(value: string | number | boolean, type: string): string | number | boolean {
  if (type === 'number' || type === 'money') {
    const n = Number(value);
    if (!Number.isFinite(n)) throw new PlanError(`${String(value)} is not a number`);
    return n;
  }
  if (type === 'bool') return value === true || value === 'true' || value === 'yes';
  return String(value);
}

const escapeLike = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);
