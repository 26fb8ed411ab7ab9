import postgres from 'postgres';

export type Sql = postgres.Sql;
/** A pool or a transaction: what query functions accept, so they compose inside `sql.begin`. */
export type Db = postgres.Sql | postgres.TransactionSql;
export type Queryable = Db;

/** The one postgres.js pool of a process. Rows keep the database's snake_case names, as the API does. */
export function createSql(url: string, max = 10): Sql {
  return postgres(url, {
    max,
    onnotice: () => {},
    connection: { application_name: 'voice-crm' },
  });
}

/** A LIKE/ILIKE pattern matching the term anywhere, with `%`, `_` and `\` in it taken literally. */
export const containsPattern = (term: string): string => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
