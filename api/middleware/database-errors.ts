import { invalidValue } from '../../services/database-errors';
import type { ValidationIssue } from '../errors';

/** A value Postgres refused as the caller's (db/database-errors.ts), as the 422 body's one issue. */
export function invalidValueIssue(error: unknown, method: string): ValidationIssue | undefined {
  const refused = invalidValue(error);
  if (!refused) return undefined;
  return {
    type: 'value_error',
    loc: [method === 'GET' || method === 'DELETE' ? 'query' : 'body'],
    msg: `Value not accepted: ${refused.message}`,
    input: null,
    ctx: { sqlstate: refused.sqlstate },
  };
}
