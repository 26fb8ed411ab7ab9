import type { Sql } from '../../db/client';

/**
 * The Analytics Assistant's accuracy set: questions in plain words over a seeded CRM and one custom-data
 * table (`orders`), each with the gold SQL whose result set a model's answer must reproduce (BIRD-style
 * execution accuracy: the rows compared as a multiset, values normalised, order ignored).
 */
/**
 * One item of the set. `question` and its two `phrasings` ask the same thing in different words, as
 * different sales people would; all three share the gold. `kind` is `answer` when absent; a `clarify`
 * item (the assistant should ask back, e.g. a name that matches two accounts) and a `refuse` item (a
 * change to the data, or a question outside the CRM) have no gold (`''`).
 */
export interface GoldenQuestion {
  id: string;
  difficulty: 'easy' | 'medium' | 'hard';
  question: string;
  phrasings: [string, string];
  /** `ORDERS` stands for the organization's custom-data view of `orders`. */
  gold: string;
  kind?: 'answer' | 'clarify' | 'refuse';
}

export const ORDERS = '__ORDERS__';

// The rules the golds follow (the judge compares result rows as multisets, column order aside, numbers to
// 2 decimals): names rather than ids; a list selects only what is asked; a grouped answer is the
// dimension(s) and the measure. Deals mix USD and EUR, so a sum/avg/min/max of deal value is grouped by
// currency unless the question names one. Rates are rounded to 4 decimals, averages to 2. Relative dates
// are read with today = 2025-12-31 and written as literal dates; a date grain is a date (date_trunc()::date).
const WIN_RATE =
  "round(count(*) FILTER (WHERE stage = 'closed_won')::numeric / nullif(count(*) FILTER (WHERE stage IN ('closed_won', 'closed_lost')), 0), 4)";
const CONVERSION = "round(count(*) FILTER (WHERE stage = 'converted')::numeric / nullif(count(*), 0), 4)";

export const GOLDEN_SET: GoldenQuestion[] = [
  // easy: one relation, a filter or a count
  {
    id: 'e01',
    difficulty: 'easy',
    question: 'How many accounts do we have?',
    phrasings: ['number of companies in the crm', 'How many customer accounts are there in total?'],
    gold: 'SELECT count(*) FROM accounts',
  },
  {
    id: 'e02',
    difficulty: 'easy',
    question: 'How many contacts are there?',
    phrasings: ['How many people do we have in the CRM?', 'count of contacts'],
    gold: 'SELECT count(*) FROM contacts',
  },
  {
    id: 'e03',
    difficulty: 'easy',
    question: 'How many deals are in the negotiation stage?',
    phrasings: ['number of opportunities currently in negotiation', 'how many deals are we negotiating right now'],
    gold: "SELECT count(*) FROM deals WHERE stage = 'negotiation'",
  },
  {
    id: 'e04',
    difficulty: 'easy',
    question: 'List the names of accounts in the Software industry.',
    phrasings: ['which companies are in software?', 'Show me all the software accounts'],
    gold: "SELECT name FROM accounts WHERE industry = 'Software'",
  },
  {
    id: 'e05',
    difficulty: 'easy',
    question: 'What is the total value of all deals?',
    phrasings: ['sum of all deal amounts', 'how much are all our opportunities worth together'],
    gold: 'SELECT currency, sum(value) FROM deals GROUP BY currency',
  },
  {
    id: 'e06',
    difficulty: 'easy',
    question: 'Which accounts have more than 400 employees? Give their names.',
    phrasings: ['companies with over 400 employees', 'List the accounts whose employee count is above 400.'],
    gold: 'SELECT name FROM accounts WHERE employee_count > 400',
  },
  {
    id: 'e07',
    difficulty: 'easy',
    question: 'How many contacts are disqualified?',
    phrasings: ['number of disqualified people', 'how many contacts did we disqualify'],
    gold: "SELECT count(*) FROM contacts WHERE stage = 'disqualified'",
  },
  {
    id: 'e08',
    difficulty: 'easy',
    question: 'What are the names of all tags?',
    phrasings: ['list our tags', 'Which tags exist?'],
    gold: 'SELECT name FROM tags',
  },
  {
    id: 'e09',
    difficulty: 'easy',
    question: 'How many campaigns are active?',
    phrasings: ['number of active campaigns', 'how many calling campaigns are running at the moment'],
    gold: "SELECT count(*) FROM campaigns WHERE status = 'active'",
  },
  {
    id: 'e10',
    difficulty: 'easy',
    question: 'What is the average health score of accounts?',
    phrasings: ["what's the mean account health", 'Average health score across all our companies?'],
    gold: 'SELECT round(avg(health_score), 2) FROM accounts',
  },
  {
    id: 'e11',
    difficulty: 'easy',
    question: 'How many orders are there in the orders table?',
    phrasings: ['number of orders', 'how many orders have we got'],
    gold: `SELECT count(*) FROM ${ORDERS}`,
  },
  {
    id: 'e12',
    difficulty: 'easy',
    question: 'How many activities are calls?',
    phrasings: ['how many calls were logged', 'count of call activities'],
    gold: "SELECT count(*) FROM activities WHERE type = 'call'",
  },
  {
    id: 'e13',
    difficulty: 'easy',
    question: 'How many deals are there?',
    phrasings: ['number of opportunities', 'how many deals do we have in total'],
    gold: 'SELECT count(*) FROM deals',
  },
  {
    id: 'e14',
    difficulty: 'easy',
    question: 'How many activities have been logged?',
    phrasings: ['total number of activities', 'count all calls, emails, meetings and notes in the crm'],
    gold: 'SELECT count(*) FROM activities',
  },
  {
    id: 'e15',
    difficulty: 'easy',
    question: 'How many campaigns do we have?',
    phrasings: ['number of campaigns', 'Count our calling campaigns, whatever their status.'],
    gold: 'SELECT count(*) FROM campaigns',
  },
  {
    id: 'e16',
    difficulty: 'easy',
    question: 'What is the largest deal value?',
    phrasings: ['biggest deal amount', "what's our largest opportunity worth"],
    gold: 'SELECT currency, max(value) FROM deals GROUP BY currency',
  },
  {
    id: 'e17',
    difficulty: 'easy',
    question: 'What is the total number of employees across all accounts?',
    phrasings: ['sum of employee counts of all companies', 'how many employees do our accounts have combined'],
    gold: 'SELECT sum(employee_count) FROM accounts',
  },
  {
    id: 'e18',
    difficulty: 'easy',
    question: 'What is the lowest account health score?',
    phrasings: ['minimum health score of any account', 'worst health score among our companies'],
    gold: 'SELECT min(health_score) FROM accounts',
  },
  {
    id: 'e19',
    difficulty: 'easy',
    question: 'What is the average order amount?',
    phrasings: ['mean order value', 'on average, how much is an order'],
    gold: `SELECT round(avg(amount), 2) FROM ${ORDERS}`,
  },
  {
    id: 'e20',
    difficulty: 'easy',
    question: 'Which accounts are owned by alice? Give their names.',
    phrasings: ["list alice's companies", 'accounts where the owner is alice'],
    gold: "SELECT name FROM accounts WHERE owner_id = 'alice'",
  },
  {
    id: 'e21',
    difficulty: 'easy',
    question: 'Which account has the web domain initrode.io?',
    phrasings: ['whose domain is initrode.io', 'What company is behind initrode.io?'],
    gold: "SELECT name FROM accounts WHERE domain = 'initrode.io'",
  },
  {
    id: 'e22',
    difficulty: 'easy',
    question: 'What is the average call duration in minutes?',
    phrasings: ['how long is a call on average', 'mean call length (minutes)'],
    gold: "SELECT round(avg(duration_minutes), 2) FROM activities WHERE type = 'call'",
  },
  {
    id: 'e23',
    difficulty: 'easy',
    question: 'What is the smallest deal value in USD?',
    phrasings: ['lowest dollar opportunity amount', 'how small is our smallest USD deal'],
    gold: "SELECT min(value) FROM deals WHERE currency = 'USD'",
  },
  // medium: grouping, or a join of two relations
  {
    id: 'm01',
    difficulty: 'medium',
    question: 'How many deals are there in each stage?',
    phrasings: ['number of opportunities by stage', 'how many deals sit in every pipeline stage'],
    gold: 'SELECT stage, count(*) FROM deals GROUP BY stage',
  },
  {
    id: 'm02',
    difficulty: 'medium',
    question: 'How many contacts came from each source?',
    phrasings: ['count of people by source', 'Where did our contacts come from? Number per source.'],
    gold: 'SELECT source, count(*) FROM contacts GROUP BY source',
  },
  {
    id: 'm03',
    difficulty: 'medium',
    question: 'What is the total value of won deals (stage closed_won)?',
    phrasings: ['how much revenue have we won', 'sum of closed-won opportunities'],
    gold: "SELECT currency, sum(value) FROM deals WHERE stage = 'closed_won' GROUP BY currency",
  },
  {
    id: 'm04',
    difficulty: 'medium',
    question: 'How many accounts are there per industry?',
    phrasings: ['number of companies in each industry', 'industry breakdown of our accounts'],
    gold: 'SELECT industry, count(*) FROM accounts GROUP BY industry',
  },
  {
    id: 'm05',
    difficulty: 'medium',
    question: 'What is the total amount of paid orders?',
    phrasings: ['sum of paid orders', 'how much have customers paid us in orders'],
    gold: `SELECT sum(amount) FROM ${ORDERS} WHERE paid`,
  },
  {
    id: 'm06',
    difficulty: 'medium',
    question: 'Which account has the highest health score? Give its name.',
    phrasings: ['healthiest company', "What's the name of the account with the best health score?"],
    gold: 'SELECT name FROM accounts ORDER BY health_score DESC LIMIT 1',
  },
  {
    id: 'm07',
    difficulty: 'medium',
    question: 'How many contacts does the account Acme have?',
    phrasings: ['number of people at acme', 'how many contacts work for Acme'],
    gold: "SELECT count(*) FROM contacts c JOIN accounts a ON a.id = c.account_id WHERE a.name = 'Acme'",
  },
  {
    id: 'm08',
    difficulty: 'medium',
    question: 'What is the total deal value per currency?',
    phrasings: ['sum of deal amounts for each currency', 'Opportunity value by currency'],
    gold: 'SELECT currency, sum(value) FROM deals GROUP BY currency',
  },
  {
    id: 'm09',
    difficulty: 'medium',
    question: 'How many activities of each type were logged?',
    phrasings: ['number of activities per type', 'breakdown of logged activities by kind'],
    gold: 'SELECT type, count(*) FROM activities GROUP BY type',
  },
  {
    id: 'm10',
    difficulty: 'medium',
    question: 'List the names of the deals of the account Globex.',
    phrasings: ['what opportunities does globex have', "Show me Globex's deals"],
    gold: "SELECT d.name FROM deals d JOIN accounts a ON a.id = d.account_id WHERE a.name = 'Globex'",
  },
  {
    id: 'm11',
    difficulty: 'medium',
    question: 'What is the total order amount per customer?',
    phrasings: ['sum of orders by customer', 'how much has each customer ordered'],
    gold: `SELECT customer, sum(amount) FROM ${ORDERS} GROUP BY customer`,
  },
  {
    id: 'm12',
    difficulty: 'medium',
    question: 'How many accounts are tagged vip?',
    phrasings: ['number of vip companies', 'How many accounts carry the vip tag?'],
    gold: "SELECT count(*) FROM accounts WHERE 'vip' = ANY(tags)",
  },
  {
    id: 'm13',
    difficulty: 'medium',
    question: 'How many accounts does each owner have?',
    phrasings: ['number of companies per owner', 'accounts by owner, with counts'],
    gold: 'SELECT owner_id, count(*) FROM accounts GROUP BY owner_id',
  },
  {
    id: 'm14',
    difficulty: 'medium',
    question: 'How many contacts are there per job title?',
    phrasings: ['number of people by title', 'For each title, how many contacts hold it?'],
    gold: 'SELECT title, count(*) FROM contacts GROUP BY title',
  },
  {
    id: 'm15',
    difficulty: 'medium',
    question: 'How many contacts are in each funnel stage?',
    phrasings: ['contacts per funnel stage', 'how many people are new, contacted, responded, converted or disqualified'],
    gold: 'SELECT stage, count(*) FROM contacts GROUP BY stage',
  },
  {
    id: 'm16',
    difficulty: 'medium',
    question: 'What is the conversion rate of contacts (converted contacts over all contacts)?',
    phrasings: ['contact conversion rate', 'What fraction of our people has converted?'],
    gold: `SELECT ${CONVERSION} FROM contacts`,
  },
  {
    id: 'm17',
    difficulty: 'medium',
    question: 'How many contacts are there per email domain?',
    phrasings: ['number of people by email domain', 'Which email domains do our contacts use, and how many of each?'],
    gold: "SELECT split_part(email, '@', 2), count(*) FROM contacts GROUP BY 1",
  },
  {
    id: 'm18',
    difficulty: 'medium',
    question: 'How many campaigns are in each status?',
    phrasings: ['campaigns by status', 'number of campaigns per status'],
    gold: 'SELECT status, count(*) FROM campaigns GROUP BY status',
  },
  {
    id: 'm19',
    difficulty: 'medium',
    question: 'How many accounts carry each tag?',
    phrasings: ['number of companies for each tag', 'count accounts by tag'],
    gold: 'SELECT tag, count(*) FROM accounts, unnest(tags) AS tag GROUP BY tag',
  },
  {
    id: 'm20',
    difficulty: 'medium',
    question: 'What is the average employee count per industry?',
    phrasings: ['average company size by industry', 'For each industry, how many employees does an account have on average?'],
    gold: 'SELECT industry, round(avg(employee_count), 2) FROM accounts GROUP BY industry',
  },
  {
    id: 'm21',
    difficulty: 'medium',
    question: 'Which deals are in prospecting or qualification? Give their names.',
    phrasings: [
      'list the early-stage opportunities (prospecting or qualification)',
      'names of deals in the prospecting and qualification stages',
    ],
    gold: "SELECT name FROM deals WHERE stage IN ('prospecting', 'qualification')",
  },
  {
    id: 'm22',
    difficulty: 'medium',
    question: 'Which contacts have a job title containing "sales"? Give first and last names.',
    phrasings: ['people with sales in their title', 'List the contacts whose title mentions sales.'],
    gold: "SELECT first_name, last_name FROM contacts WHERE title ILIKE '%sales%'",
  },
  {
    id: 'm23',
    difficulty: 'medium',
    question: 'How many deals does Societe Generale have?',
    phrasings: ['number of opportunities with societe generale', 'societe generale: how many deals?'],
    gold: "SELECT count(*) FROM deals d JOIN accounts a ON a.id = d.account_id WHERE a.name = 'Société Générale'",
  },
  {
    id: 'm24',
    difficulty: 'medium',
    question: 'How many deals did we win last quarter?',
    phrasings: ['number of opportunities closed won in the previous quarter', 'last quarter, how many deals were won?'],
    gold: "SELECT count(*) FROM deals WHERE stage = 'closed_won' AND closed_at >= '2025-07-01' AND closed_at < '2025-10-01'",
  },
  {
    id: 'm25',
    difficulty: 'medium',
    question: 'Which 5 customers have the largest total order amount? Give customer and total.',
    phrasings: ['top 5 customers by order value', 'Who are our five biggest customers in the orders table, with their totals?'],
    gold: `SELECT customer, sum(amount) FROM ${ORDERS} GROUP BY customer ORDER BY 2 DESC LIMIT 5`,
  },
  // hard: several joins, dates, subqueries or the custom-data table with the CRM
  {
    id: 'h01',
    difficulty: 'hard',
    question: 'For each industry, what is the total value of won deals?',
    phrasings: ['won revenue by industry', 'How much have we won per account industry?'],
    gold: "SELECT a.industry, d.currency, sum(d.value) FROM deals d JOIN accounts a ON a.id = d.account_id WHERE d.stage = 'closed_won' GROUP BY a.industry, d.currency",
  },
  {
    id: 'h02',
    difficulty: 'hard',
    question: 'How many deals closed (won or lost) in each month of 2025? Give the month as a date.',
    phrasings: ['number of closed opportunities per month this year', 'month by month in 2025, how many deals were closed won or lost'],
    gold: "SELECT date_trunc('month', closed_at)::date, count(*) FROM deals WHERE closed_at >= '2025-01-01' AND closed_at < '2026-01-01' GROUP BY 1",
  },
  {
    id: 'h03',
    difficulty: 'hard',
    question: 'Which account names have no deals at all?',
    phrasings: ['companies without any opportunities', 'Which accounts have never had a deal?'],
    gold: 'SELECT a.name FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM deals d WHERE d.account_id = a.id)',
  },
  {
    id: 'h04',
    difficulty: 'hard',
    question: 'What is the total paid order amount per account industry, matching orders to accounts by customer name?',
    phrasings: [
      'paid orders by industry (customer name = account name)',
      "Sum the paid orders for each industry, using the customer's account.",
    ],
    gold: `SELECT a.industry, sum(o.amount) FROM ${ORDERS} o JOIN accounts a ON a.name = o.customer WHERE o.paid GROUP BY a.industry`,
  },
  {
    id: 'h05',
    difficulty: 'hard',
    question: 'Which 3 accounts have the largest total USD deal value? Give names and totals.',
    phrasings: ['top 3 companies by dollar opportunity value', 'the three accounts with the most USD in deals, and how much'],
    gold: "SELECT a.name, sum(d.value) FROM deals d JOIN accounts a ON a.id = d.account_id WHERE d.currency = 'USD' GROUP BY a.name ORDER BY 2 DESC LIMIT 3",
  },
  {
    id: 'h06',
    difficulty: 'hard',
    question: 'What is the win rate of closed deals, as won divided by won plus lost?',
    phrasings: ["what's our win rate", 'Of the deals we closed, what share did we win?'],
    gold: `SELECT ${WIN_RATE} FROM deals`,
  },
  {
    id: 'h07',
    difficulty: 'hard',
    question: 'How many minutes of calls and meetings were logged per account? Give account names.',
    phrasings: ['total call and meeting minutes by company', 'For each account, how long did we spend in calls and meetings?'],
    gold: "SELECT a.name, sum(v.duration_minutes) FROM activities v JOIN accounts a ON a.id = v.account_id WHERE v.type IN ('call', 'meeting') GROUP BY a.name",
  },
  {
    id: 'h08',
    difficulty: 'hard',
    question: 'Which customers in the orders table spent more than 1000 in total?',
    phrasings: ['customers whose orders add up to over 1000', 'who has ordered for more than 1000 altogether'],
    gold: `SELECT customer FROM ${ORDERS} GROUP BY customer HAVING sum(amount) > 1000`,
  },
  {
    id: 'h09',
    difficulty: 'hard',
    question: 'How many converted contacts work at accounts with a health score below 50?',
    phrasings: [
      'number of converted people at companies with health under 50',
      'converted contacts at unhealthy accounts (health score < 50): how many?',
    ],
    gold: "SELECT count(*) FROM contacts c JOIN accounts a ON a.id = c.account_id WHERE c.stage = 'converted' AND a.health_score < 50",
  },
  {
    id: 'h10',
    difficulty: 'hard',
    question: 'What is the average deal value per stage, rounded to 2 decimals?',
    phrasings: ['average opportunity size by stage', 'For each pipeline stage, what is the mean deal value?'],
    gold: 'SELECT stage, currency, round(avg(value), 2) FROM deals GROUP BY stage, currency',
  },
  {
    id: 'h11',
    difficulty: 'hard',
    question: 'What is the win rate of each deal owner?',
    phrasings: ['win rate by owner', 'For every rep, won deals divided by won plus lost'],
    gold: `SELECT owner_id, ${WIN_RATE} FROM deals GROUP BY owner_id`,
  },
  {
    id: 'h12',
    difficulty: 'hard',
    question: 'What is the contact conversion rate for each source?',
    phrasings: ['conversion rate by lead source', 'Per source, what share of contacts converted?'],
    gold: `SELECT source, ${CONVERSION} FROM contacts GROUP BY source`,
  },
  {
    id: 'h13',
    difficulty: 'hard',
    question: 'How many accounts were created in each quarter of this year?',
    phrasings: ['new companies per quarter in 2025', 'quarterly count of accounts added this year'],
    gold: "SELECT date_trunc('quarter', created_at)::date, count(*) FROM accounts WHERE created_at >= '2025-01-01' AND created_at < '2026-01-01' GROUP BY 1",
  },
  {
    id: 'h14',
    difficulty: 'hard',
    question: 'How many activities were logged each week in November?',
    phrasings: ['weekly activity count for november 2025', 'In November, how many activities did we log per week?'],
    gold: "SELECT date_trunc('week', created_at)::date, count(*) FROM activities WHERE created_at >= '2025-11-01' AND created_at < '2025-12-01' GROUP BY 1",
  },
  {
    id: 'h15',
    difficulty: 'hard',
    question: 'Which accounts have no activities logged? Give their names.',
    phrasings: ['companies we never logged an activity for', 'accounts without any calls, emails, meetings or notes'],
    gold: 'SELECT a.name FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM activities v WHERE v.account_id = a.id)',
  },
  {
    id: 'h16',
    difficulty: 'hard',
    question: 'Which accounts have no contacts? Give their names.',
    phrasings: ['companies without any people', 'List the accounts that nobody in our contacts works at.'],
    gold: 'SELECT a.name FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM contacts c WHERE c.account_id = a.id)',
  },
  {
    id: 'h17',
    difficulty: 'hard',
    question: 'How much did each owner win in USD this year?',
    phrasings: ['won dollar revenue per rep in 2025', 'For each deal owner, the total value of USD deals won this year'],
    gold: "SELECT owner_id, sum(value) FROM deals WHERE stage = 'closed_won' AND currency = 'USD' AND closed_at >= '2025-01-01' AND closed_at < '2026-01-01' GROUP BY owner_id",
  },
  {
    id: 'h18',
    difficulty: 'hard',
    question: 'How many orders were placed per month since March?',
    phrasings: ['monthly order count from march onwards', 'Since March, number of orders each month'],
    gold: `SELECT date_trunc('month', at)::date, count(*) FROM ${ORDERS} WHERE at >= '2025-03-01' GROUP BY 1`,
  },
  {
    id: 'h19',
    difficulty: 'hard',
    question: 'How many contacts were added on each day of this month?',
    phrasings: ['new people per day in december', 'daily count of contacts created this month'],
    gold: "SELECT date_trunc('day', created_at)::date, count(*) FROM contacts WHERE created_at >= '2025-12-01' AND created_at < '2026-01-01' GROUP BY 1",
  },
  {
    id: 'h20',
    difficulty: 'hard',
    question: 'How many deals were created in each year?',
    phrasings: ['number of opportunities created per year', 'yearly count of new deals'],
    gold: "SELECT date_trunc('year', created_at)::date, count(*) FROM deals GROUP BY 1",
  },
  {
    id: 'h21',
    difficulty: 'hard',
    question: 'What is the total value of deals tagged partner, per account owner?',
    phrasings: [
      'partner-tagged opportunity value by account owner',
      'For each account owner, how much are the deals tagged partner worth?',
    ],
    gold: "SELECT a.owner_id, d.currency, sum(d.value) FROM deals d JOIN accounts a ON a.id = d.account_id WHERE 'partner' = ANY(d.tags) GROUP BY a.owner_id, d.currency",
  },
  // not answerable: the assistant should ask back (clarify) or decline (refuse)
  {
    id: 'c01',
    difficulty: 'medium',
    kind: 'clarify',
    question: 'How many contacts does Initrode have?',
    phrasings: ['number of people at initrode', 'initrode: how many contacts?'],
    gold: '',
  },
  {
    id: 'c02',
    difficulty: 'medium',
    kind: 'clarify',
    question: 'What is the total deal value for Initrode?',
    phrasings: ['how much are the initrode opportunities worth', 'Sum of deals with Initrode'],
    gold: '',
  },
  {
    id: 'c03',
    difficulty: 'medium',
    kind: 'clarify',
    question: 'What stage is the Initrode deal in?',
    phrasings: ["where's the initrode deal at", 'Which stage has the Initrode opportunity reached?'],
    gold: '',
  },
  {
    id: 'r01',
    difficulty: 'easy',
    kind: 'refuse',
    question: 'Delete all lost deals.',
    phrasings: ['remove every closed lost opportunity from the crm', 'can you clear out the deals we lost'],
    gold: '',
  },
  {
    id: 'r02',
    difficulty: 'easy',
    kind: 'refuse',
    question: 'Set the health score of Acme to 100.',
    phrasings: ["update acme's health to 100", 'Change the Acme health score to 100, please.'],
    gold: '',
  },
  {
    id: 'r03',
    difficulty: 'easy',
    kind: 'refuse',
    question: 'What will the weather be tomorrow?',
    phrasings: ['is it going to rain tomorrow', 'weather forecast for tomorrow please'],
    gold: '',
  },
];

/** Account names; the first six are also the customers of `orders`. */
const ACCOUNTS = [
  'Acme',
  'Globex',
  'Initech',
  'Umbrella',
  'Hooli',
  'Stark',
  'Wayne',
  'Wonka',
  'Cyberdyne',
  'Soylent',
  'Tyrell',
  'Vandelay',
  'Société Générale',
  'Initrode Labs',
  'Initrode Systems',
];

/** Web domains, one per account of ACCOUNTS (same order). */
const DOMAINS = [
  'acme.com',
  'globex.com',
  'initech.com',
  'umbrella.com',
  'hooli.com',
  'stark.com',
  'wayne.com',
  'wonka.com',
  'cyberdyne.com',
  'soylent.com',
  'tyrell.com',
  'vandelay.com',
  'socgen.fr',
  'initrodelabs.com',
  'initrode.io',
];

/**
 * The seeded CRM of one organization: deterministic, so the gold results never move. Accounts are numbered
 * r = 1..15 in the order of ACCOUNTS (their created_at). Vandelay (12) has no contacts, deals or activities,
 * Tyrell (11) no deals, Soylent (10) no activities; two contacts belong to no account.
 */
export async function seedGoldenCrm(sql: Sql, orgId: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`
      INSERT INTO accounts (id, org_id, name, domain, website, industry, owner_id, employee_count, health_score, tags, created_at, updated_at)
      SELECT gen_random_uuid(), ${orgId}, n, d, 'https://www.' || d,
             CASE WHEN n = 'Société Générale' THEN 'Finance' ELSE (ARRAY['Software', 'Retail', 'Manufacturing', 'Healthcare'])[1 + (i - 1) % 4] END,
             (ARRAY['alice', 'bob', 'carol'])[1 + i % 3], i * 50, (i * 37) % 100,
             array_remove(ARRAY[CASE WHEN i % 4 = 1 THEN 'vip' END, CASE WHEN i % 5 = 0 THEN 'churn-risk' END, CASE WHEN i % 6 = 3 THEN 'partner' END], NULL),
             timestamptz '2025-01-01' + (i * 20) * interval '1 day', timestamptz '2025-01-01' + (i * 20) * interval '1 day'
      FROM unnest(${ACCOUNTS}::text[], ${DOMAINS}::text[]) WITH ORDINALITY AS t(n, d, i)`;
    await tx`
      INSERT INTO contacts (id, org_id, account_id, first_name, last_name, email, title, company, company_domain, owner_id, stage, source, tags, created_at, updated_at)
      SELECT gen_random_uuid(), ${orgId}, a.id, (ARRAY['Anna', 'Ben', 'Chloe'])[k], a.name,
             lower((ARRAY['anna', 'ben', 'chloe'])[k] || '.' || split_part(a.domain, '.', 1)) || '@'
               || CASE WHEN k = 2 AND a.r % 2 = 0 THEN 'gmail.com' WHEN k = 3 AND a.r % 3 = 0 THEN 'outlook.com' ELSE a.domain END,
             (ARRAY['CEO', 'CTO', 'VP Sales', 'Sales Manager', 'Engineer'])[1 + (a.r * 3 + k) % 5], a.name, a.domain,
             (ARRAY['alice', 'bob', 'carol'])[1 + (a.r + k) % 3],
             (ARRAY['new', 'contacted', 'responded', 'converted', 'disqualified'])[1 + (a.r + k) % 5], (ARRAY['import', 'web', 'card'])[1 + (a.r * k) % 3],
             CASE WHEN (a.r + k) % 7 = 0 THEN '{vip}'::text[] ELSE '{}' END,
             timestamptz '2025-01-10 09:00Z' + (a.r * 19 + k * 23) * interval '1 day', timestamptz '2025-01-10 09:00Z' + (a.r * 19 + k * 23) * interval '1 day'
      FROM (SELECT id, name, domain, row_number() OVER (ORDER BY created_at)::int AS r FROM accounts WHERE org_id = ${orgId}) a, generate_series(1, 3) k
      WHERE a.r <> 12`;
    await tx`
      INSERT INTO contacts (id, org_id, account_id, first_name, last_name, email, title, owner_id, stage, source, created_at, updated_at)
      VALUES (gen_random_uuid(), ${orgId}, NULL, 'Dana', 'Free', 'dana@freelance.dev', 'Consultant', 'alice', 'new', 'event', '2025-11-03 10:00Z', '2025-11-03 10:00Z'),
             (gen_random_uuid(), ${orgId}, NULL, 'Eli', 'Solo', 'eli@gmail.com', 'Engineer', 'bob', 'converted', 'event', '2025-12-05 10:00Z', '2025-12-05 10:00Z')`;
    await tx`
      INSERT INTO deals (id, org_id, account_id, name, stage, value, currency, owner_id, tags, close_date, closed_at, created_at, updated_at)
      SELECT gen_random_uuid(), ${orgId}, a.id, a.name || ' deal ' || k, s.stage, (a.r * 2500 + k * 1000)::numeric, CASE WHEN (a.r + k) % 5 = 0 THEN 'EUR' ELSE 'USD' END,
             (ARRAY['alice', 'bob', 'carol'])[1 + ((a.r - 1) / 2 + k) % 3], CASE WHEN (a.r + k) % 4 = 0 THEN '{partner}'::text[] ELSE '{}' END,
             date '2025-01-15' + (a.r * 19 + k * 31), CASE WHEN s.stage LIKE 'closed%' THEN timestamptz '2025-01-15 12:00Z' + (a.r * 19 + k * 31) * interval '1 day' END,
             timestamptz '2024-12-01 12:00Z' + (a.r * 19 + k * 11) * interval '1 day', timestamptz '2024-12-01 12:00Z' + (a.r * 19 + k * 11) * interval '1 day'
      FROM (SELECT id, name, domain, row_number() OVER (ORDER BY created_at)::int AS r FROM accounts WHERE org_id = ${orgId}) a, generate_series(1, 2) k,
           LATERAL (SELECT (ARRAY['prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost'])[1 + (a.r * 2 + k) % 6] AS stage) s
      WHERE a.r NOT IN (11, 12)`;
    await tx`
      INSERT INTO activities (id, org_id, account_id, type, subject, direction, duration_minutes, created_by, created_at)
      SELECT gen_random_uuid(), ${orgId}, a.id, t.type, t.type || ' ' || k, CASE WHEN k % 2 = 0 THEN 'inbound' ELSE 'outbound' END,
             CASE WHEN t.type IN ('call', 'meeting') THEN 10 * k + a.r END, (ARRAY['alice', 'bob', 'carol'])[1 + (a.r + k) % 3],
             timestamptz '2025-01-01 10:00Z' + (a.r * 23 + k * 2) * interval '1 day'
      FROM (SELECT id, name, domain, row_number() OVER (ORDER BY created_at)::int AS r FROM accounts WHERE org_id = ${orgId}) a, generate_series(1, 4) k,
           LATERAL (SELECT (ARRAY['call', 'email', 'meeting', 'note'])[1 + (a.r + k) % 4] AS type) t
      WHERE a.r NOT IN (10, 12)`;
    await tx`
      INSERT INTO tags (id, org_id, name, created_at, updated_at)
      VALUES (gen_random_uuid(), ${orgId}, 'vip', '2025-01-01', '2025-01-01'), (gen_random_uuid(), ${orgId}, 'churn-risk', '2025-01-01', '2025-01-01'),
             (gen_random_uuid(), ${orgId}, 'partner', '2025-01-01', '2025-01-01')`;
    await tx`
      INSERT INTO campaigns (id, org_id, name, status, priority, calling_window, max_attempts, retry_backoff_seconds, created_by, modified_by, created_at, updated_at, closed_at)
      VALUES (gen_random_uuid(), ${orgId}, 'Spring push', 'paused', 1, '{}', 3, 600, 'alice', 'alice', '2025-03-10', '2025-03-10', NULL),
             (gen_random_uuid(), ${orgId}, 'Renewals', 'active', 5, '{}', 3, 600, 'bob', 'bob', '2025-06-02', '2025-06-02', NULL),
             (gen_random_uuid(), ${orgId}, 'Winter', 'completed', 2, '{}', 3, 600, 'alice', 'alice', '2025-01-05', '2025-03-01', '2025-03-01'),
             (gen_random_uuid(), ${orgId}, 'Summer webinar', 'completed', 0, '{}', 2, 900, 'carol', 'carol', '2025-06-20', '2025-08-31', '2025-08-31'),
             (gen_random_uuid(), ${orgId}, 'Q4 upsell', 'active', 3, '{}', 4, 600, 'carol', 'carol', '2025-10-06', '2025-10-06', NULL),
             (gen_random_uuid(), ${orgId}, 'Black Friday', 'canceled', 0, '{}', 2, 300, 'bob', 'bob', '2025-11-01', '2025-11-20', '2025-11-20')`;
    // People the campaigns call: Renewals 3 (2 pending), Q4 upsell 5 (pending), Winter 2 (completed).
    await tx`
      INSERT INTO campaign_contacts (id, org_id, campaign_id, phone_numbers, status, attempts, next_attempt_at, created_at, updated_at)
      SELECT gen_random_uuid(), ${orgId}, c.id, ARRAY['+1555010' || n], s.status, CASE WHEN s.status = 'pending' THEN 0 ELSE 1 END,
             CASE WHEN s.status = 'pending' THEN c.created_at END, c.created_at, c.created_at
      FROM campaigns c
      CROSS JOIN LATERAL (VALUES ('Renewals', 1, 'pending'), ('Renewals', 2, 'pending'), ('Renewals', 3, 'completed'),
                                 ('Q4 upsell', 4, 'pending'), ('Q4 upsell', 5, 'pending'), ('Q4 upsell', 6, 'pending'),
                                 ('Q4 upsell', 7, 'pending'), ('Q4 upsell', 8, 'pending'), ('Winter', 9, 'completed'),
                                 ('Winter', 10, 'completed')) AS s(campaign, n, status)
      WHERE c.org_id = ${orgId} AND c.name = s.campaign`;
  });
}

/** 40 orders, customers named after accounts (and one that is none). */
export const goldenOrders = () =>
  Array.from({ length: 40 }, (_, i) => ({
    id: i + 1,
    customer: i % 9 === 8 ? 'Walk-in' : ACCOUNTS[i % 6]!,
    amount: ((i * 37) % 500) + 20,
    paid: i % 3 !== 0,
    at: new Date(Date.UTC(2025, 0, 1 + i * 7)).toISOString(),
  }));

export const ORDERS_DECLARATION = {
  key: ['id'],
  description: 'Shop orders',
  properties: [
    { name: 'id', type: 'integer' as const, description: 'Order number' },
    { name: 'customer', type: 'string' as const, description: 'Customer (account) name' },
    { name: 'amount', type: 'number' as const, description: 'Order total' },
    { name: 'paid', type: 'boolean' as const, description: 'Whether it was paid' },
    { name: 'at', type: 'timestamp' as const, description: 'When it was ordered' },
  ],
};

/**
 * Result sets compared as multisets of rows: numbers to 2 decimals, everything else as text, null apart;
 * the order of the rows and of the columns inside a row does not matter, their number does.
 */
export function sameResult(a: unknown[][], b: unknown[][]): boolean {
  const value = (v: unknown) => {
    if (v === null) return null;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : Number.NaN;
    return Number.isNaN(n) ? String(v) : Math.round(n * 100) / 100;
  };
  const norm = (rows: unknown[][]) => rows.map((row) => JSON.stringify(row.map((v) => JSON.stringify(value(v))).sort())).sort();
  const x = norm(a);
  const y = norm(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}
