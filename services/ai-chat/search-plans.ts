import type { ToolInput } from '../../domain/ai-chat';
import type { Filter, PlanInput } from '../../domain/semantic-layer/plan';

/** What a found contact or deal shows: enough to tell records apart and act on them. */
export const CONTACT_FIELDS = ['name', 'title', 'email', 'stage', 'account.name'];
export const DEAL_FIELDS = ['name', 'stage', 'value', 'currency', 'close_date', 'account.name'];

/** search_contacts as a plan over the semantic layer (so it filters exactly as the Analytics Assistant does). */
export function contactSearchPlan(q: ToolInput<'search_contacts'>): PlanInput {
  const filters: Filter[] = [];
  if (q.query) filters.push({ op: 'contains', field: 'name', value: q.query });
  if (q.title) filters.push({ op: 'contains', field: 'title', value: q.title });
  if (q.stage) filters.push({ op: 'eq', field: 'stage', value: q.stage });
  if (q.source) filters.push({ op: 'eq', field: 'source', value: q.source });
  if (q.email_domain) filters.push({ op: 'eq', field: 'email_domain', value: q.email_domain.replace(/^@/, '').toLowerCase() });
  if (q.owner_id) filters.push({ op: 'eq', field: 'owner_id', value: q.owner_id });
  if (q.tag) filters.push({ op: 'eq', field: 'tags', value: q.tag });
  if (q.account_id) filters.push({ op: 'eq', field: 'account.id', value: q.account_id });
  return { entity: 'contacts', fields: CONTACT_FIELDS, filters, order: [{ by: 'name', direction: 'asc' }], limit: q.limit ?? 25 };
}

export function dealSearchPlan(q: ToolInput<'search_deals'>): PlanInput {
  const filters: Filter[] = [];
  if (q.query) filters.push({ op: 'contains', field: 'name', value: q.query });
  if (q.stages) filters.push({ op: 'in', field: 'stage', values: q.stages });
  if (q.min_value !== undefined) filters.push({ op: 'gte', field: 'value', value: q.min_value });
  if (q.max_value !== undefined) filters.push({ op: 'lte', field: 'value', value: q.max_value });
  if (q.currency) filters.push({ op: 'eq', field: 'currency', value: q.currency });
  if (q.owner_id) filters.push({ op: 'eq', field: 'owner_id', value: q.owner_id });
  if (q.tag) filters.push({ op: 'eq', field: 'tags', value: q.tag });
  if (q.close_after) filters.push({ op: 'gte', field: 'close_date', value: q.close_after });
  if (q.close_before) filters.push({ op: 'lt', field: 'close_date', value: q.close_before });
  if (q.account_id) filters.push({ op: 'eq', field: 'account.id', value: q.account_id });
  return { entity: 'deals', fields: DEAL_FIELDS, filters, order: [{ by: 'name', direction: 'asc' }], limit: q.limit ?? 25 };
}
