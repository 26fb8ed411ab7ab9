/**
 * The db kit's partial updates (docs/decisions/platform.md, "The db kit"): a PATCH sets exactly the
 * columns it names, among the ones the area lists; an absent (undefined) field leaves its column alone.
 */
import type { Db } from '../client';

/**
 * An area's writable columns, listed once: `columnsOf<Values>()([...])` refuses a list that misses a key
 * of `Values` or names another, so a column added to the type is never silently left out of the writes.
 */
export const columnsOf =
  <T extends object>() =>
  <const K extends readonly (keyof T & string)[]>(
    columns: K & ([Exclude<keyof T & string, K[number]>] extends [never] ? unknown : { missing: Exclude<keyof T & string, K[number]> }),
  ): K =>
    columns;

/** The columns among `columns` that the patch defines (absent or undefined: left alone), in the order of `columns`. */
export function definedColumns<T extends object, K extends keyof T & string>(patch: T, columns: readonly K[]): K[] {
  return columns.filter((column) => patch[column] !== undefined);
}

/**
 * The `SET` list of a patch, postgres.js's `db(patch, ...columns)`: `"column" = value` for each of
 * `columns` the patch defines; a key not listed is never written. Values that need a conversion
 * (`db.json`) are converted by the caller, before.
 */
export function setColumns<T extends object, K extends keyof T & string>(db: Db, patch: T, columns: readonly K[]) {
  const defined = definedColumns(patch, columns);
  // postgres.js writes every key of the object when no column is named: an empty patch writes none.
  // The columns are checked against the patch's type above; postgres.js's overloads cannot follow a generic.
  return defined.length ? db(patch as never, defined as never) : db({});
}

/**
 * The `INSERT` columns and values of a row whose optional fields may be absent, postgres.js's
 * `db(row, ...columns)`: each of `columns` the row defines; an absent one takes the column's default.
 */
export function insertColumns<T extends object, K extends keyof T & string>(db: Db, row: T, columns: readonly K[]) {
  return db(row as never, definedColumns(row, columns) as never);
}
