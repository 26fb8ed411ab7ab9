import type { Sql } from '../../db/client';

/**
 * The Analytics Assistant's accuracy set: questions in plain words over a seeded CRM and one custom-data
 * table (`orders`), each with the gold SQL whose result set a model's answer must reproduce (BIRD-style
 * execution accuracy: the rows compared as a multiset, values normalised, order ignored).
 */
export interface GoldenQuestion {
  id: string;
  difficulty: 'easy' | 'medium' | 'hard';
  question: string;
  /** `ORDERS` stands for the organization's custom-data view of `orders`. */
  gold: string;
}

export const ORDERS = '__ORDERS__';

export const GOLDEN_SET: GoldenQuestion[] = [
  // easy: one relation, a filter or a count
  { id: 'e01', difficulty: 'easy', question: 'How many accounts do we have?', gold: 'SELECT count(*) FROM accounts' },
  { id: 'e02', difficulty: 'easy', question: 'How many contacts are there?', gold: 'SELECT count(*) FROM contacts' },
  {
    id: 'e03',
    difficulty: 'easy',
    question: 'How many deals are in the negotiation stage?',
    gold: "SELECT count(*) FROM deals WHERE stage = 'negotiation'",
  },
  {
    id: 'e04',
    difficulty: 'easy',
    question: 'List the names of accounts in the Software industry.',
    gold: "SELECT name FROM accounts WHERE industry = 'Software'",
  },
  { id: 'e05', difficulty: 'easy', question: 'What is the total value of all deals?', gold: 'SELECT sum(value) FROM deals' },
  {
    id: 'e06',
    difficulty: 'easy',
    question: 'Which accounts have more than 400 employees? Give their names.',
    gold: 'SELECT name FROM accounts WHERE employee_count > 400',
  },
  {
    id: 'e07',
    difficulty: 'easy',
    question: 'How many contacts are disqualified?',
    gold: "SELECT count(*) FROM contacts WHERE stage = 'disqualified'",
  },
  { id: 'e08', difficulty: 'easy', question: 'What are the names of all tags?', gold: 'SELECT name FROM tags' },
  {
    id: 'e09',
    difficulty: 'easy',
    question: 'How many campaigns are active?',
    gold: "SELECT count(*) FROM campaigns WHERE status = 'active'",
  },
  {
    id: 'e10',
    difficulty: 'easy',
    question: 'What is the average health score of accounts?',
    gold: 'SELECT avg(health_score) FROM accounts',
  },
  { id: 'e11', difficulty: 'easy', question: 'How many orders are there in the orders table?', gold: `SELECT count(*) FROM ${ORDERS}` },
  {
    id: 'e12',
    difficulty: 'easy',
    question: 'How many activities are calls?',
    gold: "SELECT count(*) FROM activities WHERE type = 'call'",
  },
  // medium: grouping, or a join of two relations
  {
    id: 'm01',
    difficulty: 'medium',
    question: 'How many deals are there in each stage?',
    gold: 'SELECT stage, count(*) FROM deals GROUP BY stage',
  },
  {
    id: 'm02',
    difficulty: 'medium',
    question: 'How many contacts came from each source?',
    gold: 'SELECT source, count(*) FROM contacts GROUP BY source',
  },
  {
    id: 'm03',
    difficulty: 'medium',
    question: 'What is the total value of won deals (stage closed_won)?',
    gold: "SELECT sum(value) FROM deals WHERE stage = 'closed_won'",
  },
  {
    id: 'm04',
    difficulty: 'medium',
    question: 'How many accounts are there per industry?',
    gold: 'SELECT industry, count(*) FROM accounts GROUP BY industry',
  },
  {
    id: 'm05',
    difficulty: 'medium',
    question: 'What is the total amount of paid orders?',
    gold: `SELECT sum(amount) FROM ${ORDERS} WHERE paid`,
  },
  {
    id: 'm06',
    difficulty: 'medium',
    question: 'Which account has the highest health score? Give its name.',
    gold: 'SELECT name FROM accounts ORDER BY health_score DESC LIMIT 1',
  },
  {
    id: 'm07',
    difficulty: 'medium',
    question: 'How many contacts does the account Acme have?',
    gold: "SELECT count(*) FROM contacts c JOIN accounts a ON a.id = c.account_id WHERE a.name = 'Acme'",
  },
  {
    id: 'm08',
    difficulty: 'medium',
    question: 'What is the total deal value per currency?',
    gold: 'SELECT currency, sum(value) FROM deals GROUP BY currency',
  },
  {
    id: 'm09',
    difficulty: 'medium',
    question: 'How many activities of each type were logged?',
    gold: 'SELECT type, count(*) FROM activities GROUP BY type',
  },
  {
    id: 'm10',
    difficulty: 'medium',
    question: 'List the names of the deals of the account Globex.',
    gold: "SELECT d.name FROM deals d JOIN accounts a ON a.id = d.account_id WHERE a.name = 'Globex'",
  },
  {
    id: 'm11',
    difficulty: 'medium',
    question: 'What is the total order amount per customer?',
    gold: `SELECT customer, sum(amount) FROM ${ORDERS} GROUP BY customer`,
  },
  {
    id: 'm12',
    difficulty: 'medium',
    question: 'How many accounts are tagged vip?',
    gold: "SELECT count(*) FROM accounts WHERE 'vip' = ANY(tags)",
  },
  // hard: several joins, dates, subqueries or the custom-data table with the CRM
  {
    id: 'h01',
    difficulty: 'hard',
    question: 'For each industry, what is the total value of won deals?',
    gold: "SELECT a.industry, sum(d.value) FROM deals d JOIN accounts a ON a.id = d.account_id WHERE d.stage = 'closed_won' GROUP BY a.industry",
  },
  {
    id: 'h02',
    difficulty: 'hard',
    question: 'How many deals closed (won or lost) in each month of 2025? Give the month as a date.',
    gold: "SELECT date_trunc('month', closed_at)::date, count(*) FROM deals WHERE closed_at >= '2025-01-01' AND closed_at < '2026-01-01' GROUP BY 1",
  },
  {
    id: 'h03',
    difficulty: 'hard',
    question: 'Which account names have no deals at all?',
    gold: 'SELECT a.name FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM deals d WHERE d.account_id = a.id)',
  },
  {
    id: 'h04',
    difficulty: 'hard',
    question: 'What is the total paid order amount per account industry, matching orders to accounts by customer name?',
    gold: `SELECT a.industry, sum(o.amount) FROM ${ORDERS} o JOIN accounts a ON a.name = o.customer WHERE o.paid GROUP BY a.industry`,
  },
  {
    id: 'h05',
    difficulty: 'hard',
    question: 'Which 3 accounts have the largest total deal value? Give names and totals.',
    gold: 'SELECT a.name, sum(d.value) FROM deals d JOIN accounts a ON a.id = d.account_id GROUP BY a.name ORDER BY 2 DESC LIMIT 3',
  },
  {
    id: 'h06',
    difficulty: 'hard',
    question: 'What is the win rate of closed deals, as won divided by won plus lost?',
    gold: "SELECT count(*) FILTER (WHERE stage = 'closed_won')::numeric / count(*) FROM deals WHERE stage IN ('closed_won', 'closed_lost')",
  },
  {
    id: 'h07',
    difficulty: 'hard',
    question: 'How many minutes of calls and meetings were logged per account? Give account names.',
    gold: "SELECT a.name, sum(v.duration_minutes) FROM activities v JOIN accounts a ON a.id = v.account_id WHERE v.type IN ('call', 'meeting') GROUP BY a.name",
  },
  {
    id: 'h08',
    difficulty: 'hard',
    question: 'Which customers in the orders table spent more than 1000 in total?',
    gold: `SELECT customer FROM ${ORDERS} GROUP BY customer HAVING sum(amount) > 1000`,
  },
  {
    id: 'h09',
    difficulty: 'hard',
    question: 'How many converted contacts work at accounts with a health score below 50?',
    gold: "SELECT count(*) FROM contacts c JOIN accounts a ON a.id = c.account_id WHERE c.stage = 'converted' AND a.health_score < 50",
  },
  {
    id: 'h10',
    difficulty: 'hard',
    question: 'What is the average deal value per stage, rounded to 2 decimals?',
    gold: 'SELECT stage, round(avg(value), 2) FROM deals GROUP BY stage',
  },
];

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
];

/** The seeded CRM of one organization: deterministic, so the gold results never move. */
export async function seedGoldenCrm(sql: Sql, orgId: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`
      INSERT INTO accounts (id, org_id, name, industry, employee_count, health_score, tags, created_at)
      SELECT gen_random_uuid(), ${orgId}, n, (ARRAY['Software', 'Retail', 'Manufacturing', 'Healthcare'])[1 + (i - 1) % 4], i * 50,
             (i * 37) % 100, CASE WHEN i % 4 = 1 THEN '{vip}'::text[] WHEN i % 5 = 0 THEN '{churn-risk}'::text[] ELSE '{}' END,
             timestamptz '2025-01-01' + (i * 20) * interval '1 day'
      FROM unnest(${ACCOUNTS}::text[]) WITH ORDINALITY AS t(n, i)`;
    await tx`
      INSERT INTO contacts (id, org_id, account_id, first_name, last_name, email, stage, source)
      SELECT gen_random_uuid(), ${orgId}, a.id, 'Contact' || k, a.name, lower(a.name) || k || '@example.com',
             (ARRAY['new', 'contacted', 'responded', 'converted', 'disqualified'])[1 + (a.r + k) % 5], (ARRAY['import', 'web', 'card'])[1 + (a.r * k) % 3]
      FROM (SELECT id, name, row_number() OVER (ORDER BY name)::int AS r FROM accounts WHERE org_id = ${orgId}) a, generate_series(1, 3) k`;
    // Two deals per account, except the last two accounts (no deals).
    await tx`
      INSERT INTO deals (id, org_id, account_id, name, stage, value, currency, close_date, closed_at)
      SELECT gen_random_uuid(), ${orgId}, a.id, a.name || ' deal ' || k, s.stage, (a.r * 2500 + k * 1000)::numeric, CASE WHEN (a.r + k) % 5 = 0 THEN 'EUR' ELSE 'USD' END,
             date '2025-01-15' + (a.r * 12 + k * 30), CASE WHEN s.stage LIKE 'closed%' THEN timestamptz '2025-01-15 12:00Z' + (a.r * 12 + k * 30) * interval '1 day' END
      FROM (SELECT id, name, row_number() OVER (ORDER BY name)::int AS r FROM accounts WHERE org_id = ${orgId}) a, generate_series(1, 2) k,
           LATERAL (SELECT (ARRAY['prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost'])[1 + (a.r * 2 + k) % 6] AS stage) s
      WHERE a.r <= 10`;
    await tx`
      INSERT INTO activities (id, org_id, account_id, type, subject, direction, duration_minutes, created_at)
      SELECT gen_random_uuid(), ${orgId}, a.id, t.type, t.type || ' ' || k, CASE WHEN k % 2 = 0 THEN 'inbound' ELSE 'outbound' END,
             CASE WHEN t.type IN ('call', 'meeting') THEN 10 * k + a.r END, timestamptz '2025-01-01' + (a.r * 5 + k) * interval '1 day'
      FROM (SELECT id, row_number() OVER (ORDER BY name)::int AS r FROM accounts WHERE org_id = ${orgId}) a, generate_series(1, 4) k,
           LATERAL (SELECT (ARRAY['call', 'email', 'meeting', 'note'])[1 + (a.r + k) % 4] AS type) t`;
    await tx`INSERT INTO tags (id, org_id, name) VALUES (gen_random_uuid(), ${orgId}, 'vip'), (gen_random_uuid(), ${orgId}, 'churn-risk'), (gen_random_uuid(), ${orgId}, 'partner')`;
    await tx`
      INSERT INTO campaigns (id, org_id, name, status, calling_window, max_attempts, retry_backoff_seconds, created_by, modified_by, closed_at)
      VALUES (gen_random_uuid(), ${orgId}, 'Spring push', 'paused', '{}', 3, 600, 'seed', 'seed', NULL),
             (gen_random_uuid(), ${orgId}, 'Renewals', 'active', '{}', 3, 600, 'seed', 'seed', NULL),
             (gen_random_uuid(), ${orgId}, 'Winter', 'completed', '{}', 3, 600, 'seed', 'seed', '2025-03-01')`;
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

/** Result sets compared as multisets of rows: numbers to 2 decimals, everything else as text. */
export function sameResult(a: unknown[][], b: unknown[][]): boolean {
  const norm = (rows: unknown[][]) =>
    rows
      .map((row) =>
        JSON.stringify(
          row.map((v) => {
            if (v === null) return null;
            const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : Number.NaN;
            return Number.isNaN(n) ? String(v) : Math.round(n * 100) / 100;
          }),
        ),
      )
      .sort();
  const x = norm(a);
  const y = norm(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}
