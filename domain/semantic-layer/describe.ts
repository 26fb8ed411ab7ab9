import type { Filter, Plan } from './plan';

/**
 * A plan's conditions in words, for answers: "account name = Pied Piper", "stage not in closed_won,
 * closed_lost", "domain ends with .fr", "without deals (stage not in closed_won, closed_lost)".
 */
export function describeFilters(plan: Plan): string[] {
  return plan.filters.map(describeFilter);
}

const path = (field: string) => field.replace('.', ' ').replace(/_/g, ' ');

function describeFilter(f: Filter): string {
  switch (f.op) {
    case 'eq':
      return `${path(f.field)} = ${String(f.value)}`;
    case 'neq':
      return `${path(f.field)} not ${String(f.value)}`;
    case 'in':
      return `${path(f.field)} in ${f.values.join(', ')}`;
    case 'not_in':
      return `${path(f.field)} not in ${f.values.join(', ')}`;
    case 'gt':
      return `${path(f.field)} > ${f.value}`;
    case 'gte':
      return `${path(f.field)} ≥ ${f.value}`;
    case 'lt':
      return `${path(f.field)} < ${f.value}`;
    case 'lte':
      return `${path(f.field)} ≤ ${f.value}`;
    case 'contains':
      return `${path(f.field)} contains ${f.value}`;
    case 'starts_with':
      return `${path(f.field)} starts with ${f.value}`;
    case 'ends_with':
      return `${path(f.field)} ends with ${f.value}`;
    case 'is_null':
      return `no ${path(f.field.replace(/\.id$/, ''))}`;
    case 'not_null':
      return `with a ${path(f.field.replace(/\.id$/, ''))}`;
    case 'with':
    case 'without': {
      const where = (f.where ?? []).map((w) => `${path(w.field)} ${w.op === 'not_in' ? 'not in' : 'in'} ${w.values.join(', ')}`);
      return `${f.op} ${f.entity.replace(/_/g, ' ')}${where.length ? ` (${where.join('; ')})` : ''}`;
    }
  }
}
