import { type Catalog, CLOSED_STAGES } from './catalog';
import type { ValueEntry } from './values';

/** Words of questions the parser reads by rule (folded, lower case). */

export const COUNT_WORDS = /\b(how many|number of|count of|count|no\. of|# of|quantity of|tally of)\b/;
export const SUM_WORDS =
  /\b(total|totals|sum|combined|overall|altogether|in total|aggregate|cumulative|how much|add up|adds up|added up)\b/;
export const AVG_WORDS = /\b(average|avg|mean|typical)\b/;
export const MIN_WORDS = /\b(minimum|min|lowest|smallest|least|fewest|cheapest|earliest|oldest|bottom|worst)\b/;
export const MAX_WORDS = /\b(maximum|max|highest|largest|biggest|most|greatest|top|best|latest|newest|largest)\b/;
export const DESC_WORDS = /\b(highest|largest|biggest|most|greatest|top|best|maximum|max|latest|newest|richest|heaviest)\b/;
export const ASC_WORDS = /\b(lowest|smallest|least|fewest|bottom|worst|minimum|min|cheapest|earliest|oldest)\b/;
export const WIN_RATE =
  /\b(win rate|win ratio|win percentage|win %|close rate|closing rate|won (?:divided by|over|out of)|success rate|hit rate|percentage of (?:deals )?won|share of (?:deals )?won|how often (?:do|did) we win|won\b.{0,40}\bdivided by|won plus lost|won \+ lost|(?:share|fraction|percentage|percent|proportion)\b.{0,40}\b(?:win|won))\b/;
export const CONVERSION_RATE =
  /\b(conversion rate|conversion ratio|convert rate|conversion|converted (?:share|percentage|rate|ratio)|share (?:of contacts )?(?:that |who )?converted|percentage (?:of contacts )?(?:that |who )?converted|percent converted|(?:share|fraction|percentage|percent|proportion)\b.{0,40}\bconvert(?:ed)?)\b/;
export const DISTINCT_WORDS = /\b(distinct|different|unique)\b/;

/** A question that asks to change data rather than read it. */
export const WRITE_REQUEST =
  /^(?:(?:please|pls|kindly|can you|could you|would you|will you|go ahead and|i want you to|i need you to|let's|lets)\s+)*(delete|remove|drop|truncate|update|change|set|rename|create|add|insert|send|email|e-mail|call|dial|move|mark|assign|reassign|merge|archive|edit|modify|import|upload|erase|wipe|purge|close|reopen|enroll|unsubscribe|book|schedule|log|clear|clean|put|make|cancel|pause|resume|start|stop|tag|untag|restore)\b(?!\s+(?:of|for|date|dates|rate|address|addresses|domain|domains|count|counts|log|logs|status|stage|value)\b)/;

/** Requests outside the CRM: translations, writing, weather. */
export const OFF_TOPIC = /\b(translate|translation|weather|forecast|rain|joke|poem|recipe|lyrics)\b|^(write|compose|draft)\b/;

export const GRAIN_WORDS: [RegExp, 'day' | 'week' | 'month' | 'quarter' | 'year'][] = [
  [/\b(daily|per day|by day|each day|every day|a day|day by day)\b/, 'day'],
  [/\b(weekly|per week|by week|each week|every week|a week|week by week)\b/, 'week'],
  [/\b(monthly|per month|by month|each month|every month|a month|month by month|months)\b/, 'month'],
  [/\b(quarterly|per quarter|by quarter|each quarter|every quarter|a quarter|quarter by quarter|quarters)\b/, 'quarter'],
  [/\b(yearly|annually|annual|per year|by year|each year|every year|a year|year by year|years)\b/, 'year'],
];

/** Words that introduce a dimension ("per stage", "for each industry", "broken down by owner"). */
export const GROUP_LEAD =
  /\b(?:per|by|for each|for every|in each|of each|each|every|across|grouped by|group by|broken down by|break ?down by|split by|breakdown by|by their|by its|for all)\s+(?:the\s+|their\s+|its\s+|our\s+)?/g;

/** Words that say a list of names is wanted. */
export const LIST_WORDS = /\b(list|show|which|what are|who are|who is|name|names|give|display|find|get|tell me)\b/;

export const NEGATED_CHILD =
  /\b(?:without|with no|with zero|have no|has no|having no|no|zero|lacking|lack|never had|never logged|never|don't have|do not have|doesn't have|does not have|haven't got|nobody|none|not linked to|not attached to|not associated with|not tied to|not connected to|unlinked to)\s+(?:(?:a|an|any|single|one|of|the|our|in|we|logged|had|have|has|won|closed|lost|signed|open|active|been|yet|ever|got|received|a single)\s+)*([a-z]+)/g;
export const WITH_CHILD =
  /\b(?:with|having|that have|who have|which have|that has|which has|has|have)\s+(?:at least one |any |some |one or more )(?:(?:open|active|won|lost|closed)\s+)?([a-z]+)/g;

/** The verb of an activity said of a record: "never called", "not emailed", "met". */
export const ACTIVITY_VERBS: Record<string, string> = {
  called: 'call',
  phoned: 'call',
  rang: 'call',
  emailed: 'email',
  mailed: 'email',
  met: 'meeting',
};

/** A question about what will be, which the data cannot answer. */
export const FORECAST =
  /\b(forecast|forecasts|predict|predicted|prediction|projected|projection|likely to|chance of|probability)\b|\bwill\s+(?:our|the|we|my)?\s*[a-z]+\s+be\b/;

/** Superlative adjectives that rank by a field: "the healthiest company". */
export const SUPERLATIVES: Record<string, { field: string; direction: 'asc' | 'desc' }> = {
  healthiest: { field: 'health_score', direction: 'desc' },
  unhealthiest: { field: 'health_score', direction: 'asc' },
  sickest: { field: 'health_score', direction: 'asc' },
};

export const STOP_WORDS = new Set(
  `a an the of in on at to for from by with without and or not no is are was were be been being do does did have has had what which who whom
  whose how many much me my our we us you your they their them it its this that these those there here all any each every per than then
  show list give tell get find name names please can could would should will shall may might i id ids one ones only just also as so
  about into over under above below between more less most least same other such own up down out off again further once whats vs versus
  total sum average avg mean count number numbers amount value values top bottom highest lowest largest smallest biggest best worst
  greatest least fewest minimum maximum min max rate ratio percent percentage share deal deals account accounts contact contacts
  activity activities tag tags campaign campaigns company companies customer customers people person stage stages industry industries
  owner owners source sources status title titles type types month months year years quarter quarters week weeks day days date dates
  created added closed won lost open new currently right now currently ever still already every last next previous since before after
  until during within across group grouped broken breakdown split each like contain contains containing called named have having got
  work works working at pipeline opportunity opportunities lead leads prospect prospects client clients org orgs firm firms business
  businesses health score scores employee employees size value revenue worth order orders record records row rows table data crm list
  sales sale monthly yearly weekly daily quarterly annual annually logged log logs call calls meeting meetings email emails note notes task tasks`.split(
    /\s+/,
  ),
);

/** Other words for values every organization has (stages, types), with the entry each stands for. */
export function valueAliases(): [string, ValueEntry][] {
  const stage = (value: string): ValueEntry => ({ entity: 'deals', field: 'stage', value });
  const contactStage = (value: string): ValueEntry => ({ entity: 'contacts', field: 'stage', value });
  const type = (value: string): ValueEntry => ({ entity: 'activities', field: 'type', value });
  return [
    ['won', stage('closed_won')],
    ['win', stage('closed_won')],
    ['closed won', stage('closed_won')],
    ['closed-won', stage('closed_won')],
    ['lost', stage('closed_lost')],
    ['closed lost', stage('closed_lost')],
    ['closed-lost', stage('closed_lost')],
    ['negotiating', stage('negotiation')],
    ['in negotiation', stage('negotiation')],
    ['negotiations', stage('negotiation')],
    ['qualifying', stage('qualification')],
    ['qualified', stage('qualification')],
    ['proposals', stage('proposal')],
    ['proposal stage', stage('proposal')],
    ['prospect stage', stage('prospecting')],
    ['converted', contactStage('converted')],
    ['disqualified', contactStage('disqualified')],
    ['disqualify', contactStage('disqualified')],
    ['running', { entity: 'campaigns', field: 'status', value: 'active' }],
    ['live', { entity: 'campaigns', field: 'status', value: 'active' }],
    ['finished', { entity: 'campaigns', field: 'status', value: 'completed' }],
    ['cancelled', { entity: 'campaigns', field: 'status', value: 'canceled' }],
    ['waiting', { entity: 'campaign_contacts', field: 'status', value: 'pending' }],
    ['queued', { entity: 'campaign_contacts', field: 'status', value: 'pending' }],
    ['still to call', { entity: 'campaign_contacts', field: 'status', value: 'pending' }],
    ['responded', contactStage('responded')],
    ['contacted', contactStage('contacted')],
    ['calls', type('call')],
    ['call', type('call')],
    ['phone calls', type('call')],
    ['emails', type('email')],
    ['meetings', type('meeting')],
    ['meeting', type('meeting')],
    ['notes', type('note')],
    ['note', type('note')],
    ['tasks', type('task')],
    ['task', type('task')],
    ['usd', { entity: 'deals', field: 'currency', value: 'USD' }],
    ['dollars', { entity: 'deals', field: 'currency', value: 'USD' }],
    ['dollar', { entity: 'deals', field: 'currency', value: 'USD' }],
    ['$', { entity: 'deals', field: 'currency', value: 'USD' }],
    ['eur', { entity: 'deals', field: 'currency', value: 'EUR' }],
    ['euros', { entity: 'deals', field: 'currency', value: 'EUR' }],
    ['euro', { entity: 'deals', field: 'currency', value: 'EUR' }],
    ['€', { entity: 'deals', field: 'currency', value: 'EUR' }],
    ['gbp', { entity: 'deals', field: 'currency', value: 'GBP' }],
    ['pounds', { entity: 'deals', field: 'currency', value: 'GBP' }],
    ['£', { entity: 'deals', field: 'currency', value: 'GBP' }],
    ...CURRENCY_NAMES.map(([word, code]): [string, ValueEntry] => [word, { entity: 'deals', field: 'currency', value: code }]),
  ];
}

/** Currencies by name and code, so a currency no deal carries is still a currency ("in Swiss francs": none). */
const CURRENCY_NAMES: [string, string][] = [
  ...[
    'usd',
    'eur',
    'gbp',
    'chf',
    'jpy',
    'cad',
    'aud',
    'nzd',
    'inr',
    'cny',
    'sek',
    'nok',
    'dkk',
    'pln',
    'czk',
    'brl',
    'mxn',
    'sgd',
    'hkd',
    'zar',
  ].map((code): [string, string] => [code, code.toUpperCase()]),
  ['us dollars', 'USD'],
  ['pounds sterling', 'GBP'],
  ['sterling', 'GBP'],
  ['british pounds', 'GBP'],
  ['swiss francs', 'CHF'],
  ['swiss franc', 'CHF'],
  ['francs', 'CHF'],
  ['yen', 'JPY'],
  ['japanese yen', 'JPY'],
  ['canadian dollars', 'CAD'],
  ['australian dollars', 'AUD'],
  ['rupees', 'INR'],
  ['indian rupees', 'INR'],
  ['yuan', 'CNY'],
  ['renminbi', 'CNY'],
  ['swedish kronor', 'SEK'],
  ['kronor', 'SEK'],
  ['zloty', 'PLN'],
  ['reais', 'BRL'],
  ['pesos', 'MXN'],
];

/** Enum values of the catalog no word should take on its own ("other than", "calling campaigns"). */
const NOT_ALONE = new Set(['other', 'calling', 'new']);

/**
 * The values fields take by rule (deal stages, statuses, the industries the API accepts), as other words for
 * themselves: a value the organization has no record of yet is still read as that value, and finds nothing.
 */
export function knownValues(catalog: Catalog): [string, ValueEntry][] {
  const out: [string, ValueEntry][] = [];
  for (const def of Object.values(catalog))
    for (const [field, f] of Object.entries(def.fields))
      for (const value of [...(f.values ?? []), ...(f.known ?? [])]) {
        if (NOT_ALONE.has(value)) continue;
        const entry = { entity: def.name, field, value };
        out.push([value, entry]);
        if (value.includes('_')) out.push([value.replace(/_/g, ' '), entry]);
      }
  return out;
}

export const OPEN_DEALS =
  /\b(open|active|in progress|ongoing|live|in play|not closed|still open|unclosed)\s+(?:[a-z]{3}\s+)?(deal|deals|opportunit|pipeline)|\bopen pipeline\b|\bpipeline\b(?! stage)/;
export const NOT_CLOSED =
  /\bnot (?:yet )?(?:been )?closed\b|\bnot (?:yet )?(?:been )?(?:won or lost|lost or won|won nor lost)\b|\bnot yet (?:won|lost)\b|\bneither won nor lost\b|\bstill open\b/;
export const CLOSED_DEALS = /\bclosed\b(?!\s*(won|lost|_))|\b(won or lost|lost or won)\b/;
export { CLOSED_STAGES };

/**
 * Every word the parser's patterns read (counting, ranking, writing, grouping words...): known words,
 * never looked up by meaning ("update" must stay a request to write, not become "updated").
 */
export function patternWords(...patterns: RegExp[]): Set<string> {
  const out = new Set<string>();
  for (const pattern of patterns) for (const m of pattern.source.matchAll(/[a-z]{3,}/g)) out.add(m[0]);
  return out;
}

export const PARSER_WORDS = patternWords(
  COUNT_WORDS,
  SUM_WORDS,
  AVG_WORDS,
  MIN_WORDS,
  MAX_WORDS,
  DESC_WORDS,
  ASC_WORDS,
  WIN_RATE,
  CONVERSION_RATE,
  DISTINCT_WORDS,
  WRITE_REQUEST,
  OFF_TOPIC,
  GROUP_LEAD,
  LIST_WORDS,
  NEGATED_CHILD,
  WITH_CHILD,
  OPEN_DEALS,
  NOT_CLOSED,
  CLOSED_DEALS,
);
