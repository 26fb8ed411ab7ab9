import { describe, expect, it } from 'vitest';
import { CRM_VIEWS, statementText, wrapStatement } from '../../domain/analytics-assistant';
import { checkSql } from '../../services/assistants/guard';
import { ATTACKS, HARMLESS, withOther } from '../support/analytics-attacks';

const ALLOWED = new Set([...CRM_VIEWS.map((v) => `analytics.${v}`), 'custom_data_aaaa.orders']);
const OTHER = '0190c0de-0000-7000-8000-00000000beef';

describe('the SQL guard', () => {
  it.each(ATTACKS.map((a) => [a.name, a] as const))('refuses %s, naming the rule', async (_name, attack) => {
    const checked = await checkSql(withOther(attack.sql, OTHER, 'custom_data_bbbb.orders'), ALLOWED);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.rule).toBe(attack.rule);
  });

  it.each(HARMLESS)('accepts %s', async (sql) => {
    expect((await checkSql(sql, ALLOWED)).ok).toBe(true);
  });

  it('accepts aggregates, windows, casts, CTEs, set operations and custom-data views', async () => {
    const sql = `WITH won AS (SELECT account_id, sum(value)::numeric AS total FROM deals WHERE stage = 'closed_won' GROUP BY 1)
      SELECT a.name, w.total, rank() OVER (ORDER BY w.total DESC), date_trunc('month', a.created_at)::date
      FROM accounts a JOIN won w ON w.account_id = a.id
      UNION ALL SELECT 'x', count(*), 1, current_date FROM custom_data_aaaa.orders`;
    const checked = await checkSql(sql, ALLOWED);
    expect(checked).toMatchObject({ ok: true, relations: ['analytics.accounts', 'analytics.deals', 'custom_data_aaaa.orders'] });
  });

  it('lets a recursive CTE name itself, and a later CTE name an earlier one', async () => {
    expect(
      (await checkSql('WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r', ALLOWED)).ok,
    ).toBe(true);
    expect((await checkSql('WITH a AS (SELECT id FROM deals), b AS (SELECT * FROM a) SELECT * FROM b', ALLOWED)).ok).toBe(true);
    // Outside its WITH, the name is a relation again.
    const outside = await checkSql('SELECT * FROM (WITH pg_roles AS (SELECT 1) SELECT * FROM pg_roles) s, pg_roles', ALLOWED);
    expect(outside).toMatchObject({ ok: false, rule: 'allowlisted_relations' });
  });

  it('runs exactly the parsed statement: no trailing semicolon or comment escapes the wrapper', async () => {
    const sql = '  SELECT name FROM accounts ; /* ) q; DROP TABLE x; -- */ ';
    const checked = await checkSql(sql, ALLOWED);
    expect(checked).toMatchObject({ ok: true, statement: 'SELECT name FROM accounts ' });
    expect(wrapStatement('SELECT 1 -- c', 10)).toBe('SELECT * FROM (\nSELECT 1 -- c\n) q LIMIT 10');
    expect(statementText("SELECT 'é' ; ", { stmts: [{ stmt_location: 0, stmt_len: 12 }] })).toBe("SELECT 'é' ");
  });
});
