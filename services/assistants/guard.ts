import { parse } from 'libpg-query';
import { type GuardRule, checkParsedStatement, statementText } from '../../domain/analytics-assistant';
import { invalid } from '../../domain/errors';

/** Longest statement taken, in characters (also declared on the API). */
export const MAX_SQL_LENGTH = 20_000;

export type Checked = { ok: true; statement: string; relations: string[] } | { ok: false; rule: GuardRule | 'syntax'; detail: string };

/**
 * Parses the text with Postgres's own parser (libpg-query, the server's grammar compiled to WebAssembly)
 * and checks the tree against the guard's rules.
 */
export async function checkSql(sql: string, allowed: ReadonlySet<string>): Promise<Checked> {
  let tree: unknown;
  try {
    tree = await parse(sql);
  } catch (error) {
    return { ok: false, rule: 'syntax', detail: `The statement does not parse: ${(error as Error).message}` };
  }
  const verdict = checkParsedStatement(tree, allowed);
  if (!verdict.ok) return verdict;
  return { ok: true, statement: statementText(sql, tree), relations: verdict.relations };
}

/** The refusal as the API answers it: 400 naming the rule. */
export const refusal = (checked: Extract<Checked, { ok: false }>) => invalid(`Refused by rule ${checked.rule}: ${checked.detail}`);
