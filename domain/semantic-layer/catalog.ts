import { ACCOUNT_INDUSTRIES } from '../accounts';
import { DEAL_STAGES } from '../deals';

/**
 * The analytics semantic layer: what the CRM's analytics views mean, declared once. Entities (one view
 * each), their fields (dimensions, and the numbers measures aggregate), the joins between views, and the
 * words people use for each. The question parser reads it to build a plan; the compiler reads it to
 * write the SQL. Custom-data tables join the catalog at run time (`customEntity`).
 */

export type FieldType = 'text' | 'enum' | 'number' | 'money' | 'date' | 'tags' | 'bool' | 'id';
export type Grain = 'day' | 'week' | 'month' | 'quarter' | 'year';
export const GRAINS: readonly Grain[] = ['day', 'week', 'month', 'quarter', 'year'];

export interface FieldDef {
  /** SQL over the entity's alias `t` (its own columns), e.g. `t.stage` or `split_part(t.email, '@', 2)`. */
  sql: string;
  type: FieldType;
  /** Words that name the field in a question, lower case, accents stripped. */
  synonyms: readonly string[];
  /** The closed set of values of an enum. */
  values?: readonly string[];
  /** False for free text nobody groups by (descriptions, bodies). */
  groupable?: boolean;
  /** What a number counts or a date means, said beside it in an answer ("minutes", "employees"); money says its currency column. */
  unit?: string;
  /** Values a field takes by rule even when no record has them yet (an industry nobody sells to is still an industry). */
  known?: readonly string[];
}

export interface JoinDef {
  /** The entity reached. */
  entity: string;
  /** This entity's column that holds the other's key (many-to-one). */
  foreignKey: string;
  /** The other's column it holds: its id, or its name for a custom table whose column holds account names. */
  targetKey?: string;
}

export interface EntityDef {
  name: string;
  /** The relation to read: an analytics view (`deals`) or a custom-data view (`custom_data_x.orders`). */
  relation: string;
  singular: string;
  /** Words for the entity itself (plural and singular forms). */
  synonyms: readonly string[];
  /** What a list of the entity shows: its name. */
  label: string;
  /** The date a time question means when it names none. */
  defaultDate?: string;
  /** The number a sum, average or ranking means when it names none. */
  defaultNumber?: string;
  fields: Record<string, FieldDef>;
  /** Many-to-one joins, by the name a field path uses (`account.industry`). */
  joins: Record<string, JoinDef>;
  /** Entities whose rows point at this one (for "accounts without any deals"), by entity name → their foreign key. */
  children: Record<string, string>;
  /** Example questions: what the embedder compares a question with. */
  examples: readonly string[];
}

const ownerField: FieldDef = {
  sql: 't.owner_id',
  type: 'text',
  synonyms: [
    'owner',
    'owners',
    'owned',
    'owns',
    'rep',
    'reps',
    'salesperson',
    'sales rep',
    'sales reps',
    'account manager',
    'account executive',
  ],
};
const tagsField: FieldDef = { sql: 't.tags', type: 'tags', synonyms: ['tag', 'tags', 'tagged', 'label', 'labels', 'labelled', 'labeled'] };
const created: FieldDef = {
  sql: 't.created_at',
  type: 'date',
  synonyms: ['created', 'added', 'new', 'creation', 'signed up', 'entered', 'opened'],
};
const updated: FieldDef = { sql: 't.updated_at', type: 'date', synonyms: ['updated', 'changed', 'modified'] };

export const CONTACT_STAGES = ['new', 'contacted', 'responded', 'converted', 'disqualified'] as const;
export const CAMPAIGN_STATUSES = ['paused', 'active', 'completed', 'canceled'] as const;
export const ACTIVITY_TYPES = ['call', 'email', 'meeting', 'note', 'task'] as const;
export const CLOSED_STAGES = ['closed_won', 'closed_lost'] as const;
export const CAMPAIGN_CONTACT_STATUSES = ['pending', 'calling', 'completed', 'failed', 'canceled'] as const;

export const CRM_ENTITIES: Record<string, EntityDef> = {
  accounts: {
    name: 'accounts',
    relation: 'accounts',
    singular: 'account',
    synonyms: [
      'account',
      'accounts',
      'company',
      'companies',
      'customer',
      'customers',
      'client',
      'clients',
      'organization',
      'organizations',
      'org',
      'orgs',
      'firm',
      'firms',
      'business',
      'businesses',
      'logo',
      'logos',
    ],
    label: 'name',
    defaultDate: 'created_at',
    defaultNumber: 'employee_count',
    fields: {
      id: { sql: 't.id', type: 'id', synonyms: [], groupable: false },
      name: { sql: 't.name', type: 'text', synonyms: ['name', 'names', 'account name', 'company name'] },
      domain: { sql: 't.domain', type: 'text', synonyms: ['domain', 'domains', 'web domain', 'website domain', 'domain name'] },
      industry: {
        sql: 't.industry',
        type: 'text',
        synonyms: ['industry', 'industries', 'sector', 'sectors', 'vertical', 'verticals'],
        known: ACCOUNT_INDUSTRIES,
      },
      website: {
        sql: 't.website',
        type: 'text',
        synonyms: ['website', 'websites', 'site', 'url', 'web site', 'homepage'],
        groupable: false,
      },
      description: { sql: 't.description', type: 'text', synonyms: ['description', 'descriptions'], groupable: false },
      owner_id: ownerField,
      employee_count: {
        sql: 't.employee_count',
        type: 'number',
        synonyms: [
          'employees',
          'employee',
          'employee count',
          'headcount',
          'staff',
          'people',
          'size',
          'workforce',
          'account size',
          'company size',
        ],
        unit: 'employees',
      },
      health_score: {
        sql: 't.health_score',
        type: 'number',
        synonyms: ['health score', 'health', 'health scores', 'score', 'scores', 'healthy', 'how healthy'],
      },
      tags: tagsField,
      created_at: created,
      updated_at: updated,
    },
    joins: {},
    children: { deals: 'account_id', contacts: 'account_id', activities: 'account_id' },
    examples: [
      'How many accounts do we have?',
      'Which companies are in the software industry?',
      'Accounts with more than 500 employees',
      'average health score of our customers',
    ],
  },
  contacts: {
    name: 'contacts',
    relation: 'contacts',
    singular: 'contact',
    synonyms: ['contact', 'contacts', 'person', 'people', 'lead', 'leads', 'prospect', 'prospects', 'individual', 'individuals'],
    label: 'name',
    defaultDate: 'created_at',
    fields: {
      id: { sql: 't.id', type: 'id', synonyms: [], groupable: false },
      name: { sql: "concat_ws(' ', t.first_name, t.last_name)", type: 'text', synonyms: ['name', 'names', 'full name'] },
      first_name: { sql: 't.first_name', type: 'text', synonyms: ['first name'] },
      last_name: { sql: 't.last_name', type: 'text', synonyms: ['last name', 'surname'] },
      email: { sql: 't.email', type: 'text', synonyms: ['email', 'emails', 'email address', 'e-mail'] },
      email_domain: {
        sql: "split_part(t.email, '@', 2)",
        type: 'text',
        synonyms: ['email domain', 'email domains', 'mail domain', 'domain', 'domains'],
      },
      title: {
        sql: 't.title',
        type: 'text',
        synonyms: ['title', 'titles', 'job title', 'job titles', 'role', 'roles', 'position', 'positions'],
      },
      department: { sql: 't.department', type: 'text', synonyms: ['department', 'departments', 'team', 'teams'] },
      phone: {
        sql: 't.phone',
        type: 'text',
        synonyms: ['phone', 'phones', 'phone number', 'phone numbers', 'telephone', 'mobile', 'number to call'],
        groupable: false,
      },
      linkedin_url: {
        sql: 't.linkedin_url',
        type: 'text',
        synonyms: ['linkedin', 'linkedin profile', 'linkedin url', 'linkedin profiles', 'linkedin page'],
        groupable: false,
      },
      company: { sql: 't.company', type: 'text', synonyms: ['company as entered'] },
      company_domain: { sql: 't.company_domain', type: 'text', synonyms: ['company domain as entered'] },
      source: {
        sql: 't.source',
        type: 'text',
        synonyms: ['source', 'sources', 'lead source', 'origin', 'channel', 'came from', 'come from', 'comes from'],
      },
      owner_id: ownerField,
      stage: {
        sql: 't.stage',
        type: 'enum',
        values: CONTACT_STAGES,
        synonyms: ['stage', 'stages', 'funnel stage', 'funnel', 'status', 'lifecycle'],
      },
      stage_changed_at: { sql: 't.stage_changed_at', type: 'date', synonyms: ['stage changed'] },
      tags: tagsField,
      created_at: created,
      updated_at: updated,
    },
    joins: { account: { entity: 'accounts', foreignKey: 'account_id' } },
    children: { activities: 'contact_id', deals: 'contact_id' },
    examples: ['How many contacts are there?', 'List the people at Acme', 'contacts per funnel stage', 'conversion rate of leads'],
  },
  deals: {
    name: 'deals',
    relation: 'deals',
    singular: 'deal',
    synonyms: ['deal', 'deals', 'opportunity', 'opportunities', 'opp', 'opps', 'pipeline', 'sale', 'sales'],
    label: 'name',
    defaultDate: 'created_at',
    defaultNumber: 'value',
    fields: {
      id: { sql: 't.id', type: 'id', synonyms: [], groupable: false },
      name: { sql: 't.name', type: 'text', synonyms: ['name', 'names', 'deal name'] },
      stage: { sql: 't.stage', type: 'enum', values: DEAL_STAGES, synonyms: ['stage', 'stages', 'pipeline stage', 'status', 'phase'] },
      value: {
        sql: 't.value',
        type: 'money',
        synonyms: [
          'value',
          'values',
          'amount',
          'amounts',
          'revenue',
          'worth',
          'size',
          'money',
          'dollars',
          'euros',
          'deal value',
          'deal size',
          'arr',
          'bookings',
        ],
        unit: 'currency',
      },
      currency: { sql: 't.currency', type: 'text', synonyms: ['currency', 'currencies'] },
      owner_id: ownerField,
      close_date: {
        sql: 't.close_date',
        type: 'date',
        synonyms: [
          'close date',
          'closing date',
          'expected close',
          'closing',
          'due to close',
          'expected to close',
          'expected close date',
          'close',
          'closes',
        ],
      },
      closed_at: { sql: 't.closed_at', type: 'date', synonyms: ['closed', 'won', 'lost', 'win', 'closed at'] },
      tags: tagsField,
      created_at: created,
      updated_at: updated,
    },
    joins: { account: { entity: 'accounts', foreignKey: 'account_id' }, contact: { entity: 'contacts', foreignKey: 'contact_id' } },
    children: { activities: 'deal_id' },
    examples: ['How many deals are in negotiation?', 'total pipeline value', 'deals won this quarter', 'win rate', 'biggest opportunities'],
  },
  activities: {
    name: 'activities',
    relation: 'activities',
    singular: 'activity',
    synonyms: ['activity', 'activities', 'interaction', 'interactions', 'touchpoint', 'touchpoints', 'engagement', 'engagements'],
    label: 'subject',
    defaultDate: 'created_at',
    defaultNumber: 'duration_minutes',
    fields: {
      type: { sql: 't.type', type: 'enum', values: ACTIVITY_TYPES, synonyms: ['type', 'types', 'kind', 'kinds'] },
      subject: { sql: 't.subject', type: 'text', synonyms: ['subject', 'subjects'] },
      body: { sql: 't.body', type: 'text', synonyms: ['body'], groupable: false },
      direction: { sql: 't.direction', type: 'enum', values: ['inbound', 'outbound'], synonyms: ['direction'] },
      due_at: { sql: 't.due_at', type: 'date', synonyms: ['due', 'scheduled'] },
      duration_minutes: {
        sql: 't.duration_minutes',
        type: 'number',
        synonyms: ['minutes', 'duration', 'time spent', 'length', 'hours', 'how long', 'spent', 'spend', 'time'],
        unit: 'minutes',
      },
      created_by: {
        sql: 't.created_by',
        type: 'text',
        synonyms: ['author', 'authors', 'logged by', 'created by', 'user', 'users', 'person who logged'],
      },
      created_at: { ...created, synonyms: ['logged', 'created', 'added', 'recorded'] },
      effective_time: { sql: 't.effective_time', type: 'date', synonyms: ['effective time', 'takes place', 'took place', 'happened'] },
    },
    joins: {
      account: { entity: 'accounts', foreignKey: 'account_id' },
      deal: { entity: 'deals', foreignKey: 'deal_id' },
      contact: { entity: 'contacts', foreignKey: 'contact_id' },
    },
    children: {},
    examples: ['How many calls did we log?', 'activities by type', 'minutes of meetings per account'],
  },
  tags: {
    name: 'tags',
    relation: 'tags',
    singular: 'tag',
    synonyms: ['tag', 'tags', 'label', 'labels'],
    label: 'name',
    defaultDate: 'created_at',
    fields: {
      name: { sql: 't.name', type: 'text', synonyms: ['name', 'names'] },
      color: { sql: 't.color', type: 'text', synonyms: ['color', 'colour', 'colors', 'colours'] },
      created_at: created,
      updated_at: updated,
    },
    joins: {},
    children: {},
    examples: ['What tags do we have?', 'how many tags exist'],
  },
  campaigns: {
    name: 'campaigns',
    relation: 'campaigns',
    singular: 'campaign',
    synonyms: ['campaign', 'campaigns', 'calling campaign', 'calling campaigns'],
    label: 'name',
    defaultDate: 'created_at',
    defaultNumber: 'max_attempts',
    fields: {
      name: { sql: 't.name', type: 'text', synonyms: ['name', 'names'] },
      status: { sql: 't.status', type: 'enum', values: CAMPAIGN_STATUSES, synonyms: ['status', 'statuses', 'state'] },
      priority: { sql: 't.priority', type: 'number', synonyms: ['priority'] },
      max_attempts: {
        sql: 't.max_attempts',
        type: 'number',
        synonyms: ['max attempts', 'maximum attempts', 'attempts per contact'],
        unit: 'attempts',
      },
      retry_backoff_seconds: {
        sql: 't.retry_backoff_seconds',
        type: 'number',
        synonyms: ['backoff', 'retry backoff', 'wait between attempts', 'retry delay'],
        unit: 'seconds',
      },
      agent_id: { sql: 't.agent_id::text', type: 'text', synonyms: ['agent', 'agents', 'voice agent'] },
      timezone: { sql: 't.timezone', type: 'text', synonyms: ['timezone', 'time zone'] },
      created_by: { sql: 't.created_by', type: 'text', synonyms: ['creator', 'created by'] },
      created_at: created,
      updated_at: updated,
      closed_at: { sql: 't.closed_at', type: 'date', synonyms: ['closed', 'ended', 'finished'] },
    },
    joins: {},
    children: { campaign_contacts: 'campaign_id', conversations: 'campaign_id' },
    examples: ['How many campaigns are active?', 'campaigns by status'],
  },
  campaign_contacts: {
    name: 'campaign_contacts',
    relation: 'campaign_contacts',
    singular: 'campaign contact',
    synonyms: ['campaign contact', 'campaign contacts', 'campaign member', 'campaign members', 'people called', 'numbers called'],
    label: 'phone',
    defaultDate: 'created_at',
    defaultNumber: 'attempts',
    fields: {
      phone: { sql: 't.phone', type: 'text', synonyms: ['phone', 'phone number', 'number'], groupable: false },
      status: { sql: 't.status', type: 'enum', values: CAMPAIGN_CONTACT_STATUSES, synonyms: ['status', 'statuses', 'state'] },
      attempts: { sql: 't.attempts', type: 'number', synonyms: ['attempts', 'call attempts', 'tries'], unit: 'attempts' },
      last_outcome: { sql: 't.last_outcome', type: 'text', synonyms: ['outcome', 'outcomes', 'last outcome', 'result'] },
      timezone: { sql: 't.timezone', type: 'text', synonyms: ['timezone', 'time zone'] },
      scheduled_at: { sql: 't.scheduled_at', type: 'date', synonyms: ['scheduled'] },
      next_attempt_at: { sql: 't.next_attempt_at', type: 'date', synonyms: ['next attempt', 'next call', 'due'] },
      dialed_at: { sql: 't.dialed_at', type: 'date', synonyms: ['dialed'] },
      created_at: { ...created, synonyms: ['added', 'enrolled', 'created'] },
      updated_at: updated,
    },
    joins: { campaign: { entity: 'campaigns', foreignKey: 'campaign_id' } },
    children: {},
    examples: ['How many contacts are in the spring campaign?', 'campaign contacts by status', 'how many people are still pending'],
  },
  conversations: {
    name: 'conversations',
    relation: 'conversations',
    singular: 'conversation',
    synonyms: [
      'conversation',
      'conversations',
      'agent call',
      'agent calls',
      'voice call',
      'voice calls',
      'agent conversation',
      'agent conversations',
    ],
    label: 'phone_number',
    defaultDate: 'created_at',
    defaultNumber: 'duration_seconds',
    fields: {
      phone_number: { sql: 't.phone_number', type: 'text', synonyms: ['phone', 'phone number', 'number'], groupable: false },
      direction: { sql: 't.direction', type: 'enum', values: ['inbound', 'outbound'], synonyms: ['direction'] },
      status: { sql: 't.status', type: 'text', synonyms: ['status', 'statuses', 'state'] },
      agent_id: { sql: 't.agent_id::text', type: 'text', synonyms: ['agent', 'agents', 'voice agent'] },
      duration_seconds: {
        sql: 't.duration_seconds',
        type: 'number',
        synonyms: ['duration', 'length', 'seconds', 'how long'],
        unit: 'seconds',
      },
      started_at: { sql: 't.started_at', type: 'date', synonyms: ['started', 'start'] },
      ended_at: { sql: 't.ended_at', type: 'date', synonyms: ['ended', 'end'] },
      created_at: { ...created, synonyms: ['created', 'recorded'] },
    },
    joins: { campaign: { entity: 'campaigns', foreignKey: 'campaign_id' } },
    children: {},
    examples: ['How many conversations did the agents have?', 'average call length of the voice agents'],
  },
};

/** A custom-data table as the catalog sees it: its view and its typed columns. */
export interface CustomTableShape {
  name: string;
  relation: string;
  description: string;
  columns: { name: string; type: string; description: string | null }[];
}

const NUMERIC_TYPES = /^(int|numeric|float|double|real|bigint|smallint|decimal)/;
const DATE_TYPES = /^(timestamp|date)/;

/** A custom-data table as an entity: numeric columns are measures, text and boolean columns dimensions, timestamps dates. */
export function customEntity(table: CustomTableShape): EntityDef {
  const fields: Record<string, FieldDef> = {};
  let label: string | undefined;
  let defaultDate: string | undefined;
  let defaultNumber: string | undefined;
  for (const column of table.columns) {
    const type: FieldType = NUMERIC_TYPES.test(column.type)
      ? 'number'
      : DATE_TYPES.test(column.type)
        ? 'date'
        : column.type === 'boolean'
          ? 'bool'
          : column.type === 'jsonb'
            ? 'id'
            : 'text';
    if (type === 'id') continue;
    // The column's own words (a description's words would claim common ones: "Order number" → number).
    const own = wordsOf(column.name);
    fields[column.name] = { sql: `t.${quoteIdent(column.name)}`, type, synonyms: own.includes(' ') ? [own] : [own, `${own}s`] };
    if (type === 'text' && !label) label = column.name;
    if (type === 'date' && !column.name.startsWith('_')) defaultDate ??= column.name;
    if (type === 'number' && !/^(id|.*_id)$/.test(column.name)) defaultNumber ??= column.name;
  }
  const plural = table.name.replace(/_/g, ' ');
  const singular = plural.replace(/ies$/, 'y').replace(/s$/, '');
  return {
    name: table.name,
    relation: table.relation,
    singular,
    synonyms: [plural, singular, ...(plural.includes(' ') ? [] : [`${singular}s`])],
    label: label ?? table.columns[0]?.name ?? 'id',
    defaultDate: defaultDate ?? '_created_at',
    defaultNumber,
    fields,
    joins: {},
    children: {},
    examples: [`How many ${plural} are there?`, `total ${defaultNumber ?? 'count'} of ${plural}`, table.description].filter(Boolean),
  };
}

const wordsOf = (name: string) =>
  name
    .toLowerCase()
    .replace(/[_\W]+/g, ' ')
    .trim();

/** A Postgres identifier, double-quoted when it is not plain lower case. */
export const quoteIdent = (name: string) => (/^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`);

/** The catalog of one organization: the CRM's entities and its custom tables. */
export type Catalog = Record<string, EntityDef>;

/**
 * The CRM and the custom tables; `accountColumns` names, per table, a text column whose values are
 * account names (found in the data), which then joins accounts by name (`orders.account.industry`).
 */
export function catalogOf(custom: CustomTableShape[], accountColumns: Record<string, string> = {}): Catalog {
  const catalog: Catalog = { ...CRM_ENTITIES };
  for (const table of custom) {
    if (catalog[table.name]) continue;
    const entity = customEntity(table);
    const column = accountColumns[table.name];
    if (column) entity.joins.account = { entity: 'accounts', foreignKey: column, targetKey: 'name' };
    catalog[table.name] = entity;
  }
  return catalog;
}
