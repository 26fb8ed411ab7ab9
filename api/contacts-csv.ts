import { CsvError, parse } from 'csv-parse/sync';
import type { z } from 'zod';
import type { ImportValues } from '../domain/contacts';
import { HttpError, badRequest } from './errors';
import { TagNames } from './schemas/common';
import { CONTACT_FIELDS, ImportRow } from './schemas/contacts';

// Parsing and checking a contacts CSV import, before anything touches the database. The header names
// contact fields (any case, any order; `email` required, `tags` optional with names separated by `;`).
// Each bad row is reported and skipped; a bad header or malformed CSV refuses the whole file.

export const MAX_IMPORT_ROWS = 5000;
const COLUMNS = [...CONTACT_FIELDS, 'tags'] as const;
type Column = (typeof COLUMNS)[number];

export interface Rejection {
  /** The record's number in the file, counting the header as 1 (the spreadsheet row, blank lines aside). */
  row: number;
  reason: string;
}

export interface ParsedRow {
  row: number;
  values: ImportValues;
}

function headerColumns(header: string[]): Column[] {
  const names = header.map((h) => h.trim().toLowerCase());
  const unknown = names.filter((n) => !(COLUMNS as readonly string[]).includes(n));
  if (unknown.length > 0)
    throw badRequest(`Unknown column: ${unknown.map((n) => JSON.stringify(n)).join(', ')}; allowed: ${COLUMNS.join(', ')}`);
  const repeated = names.filter((n, i) => names.indexOf(n) !== i);
  if (repeated.length > 0) throw badRequest(`Repeated column: ${[...new Set(repeated)].join(', ')}`);
  if (!names.includes('email')) throw badRequest('The header needs an email column: contacts are matched by email');
  return names as Column[];
}

const describeIssues = (error: z.ZodError) =>
  error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message)).join('; ');

/** One record's values, or the reason it is rejected. */
function rowValues(columns: Column[], cells: string[]): ImportValues | string {
  if (cells.length !== columns.length) return `Expected ${columns.length} fields, found ${cells.length}`;
  const present: Record<string, string> = {};
  let tags: string[] | null = null;
  columns.forEach((column, i) => {
    const cell = cells[i]!.trim();
    if (cell === '') return; // an empty cell leaves the field as it is
    if (column === 'tags')
      tags = [
        ...new Set(
          cell
            .split(';')
            .map((t) => t.trim())
            .filter(Boolean),
        ),
      ];
    else present[column] = cell;
  });
  if (!present.email) return 'email is required';
  const parsed = ImportRow.safeParse(present);
  if (!parsed.success) return describeIssues(parsed.error);
  if (tags !== null) {
    const parsedTags = TagNames.safeParse(tags);
    if (!parsedTags.success) return `tags: ${describeIssues(parsedTags.error)}`;
  }
  const values = Object.fromEntries(CONTACT_FIELDS.map((f) => [f, parsed.data[f] ?? null])) as Omit<ImportValues, 'tags'>;
  return { ...values, email: parsed.data.email!, tags };
}

/**
 * The file's valid rows and its rejected ones. Throws 400 for malformed CSV or a bad header and 413
 * for more than MAX_IMPORT_ROWS data rows. A repeated email (case-insensitive) keeps its first row.
 */
export function parseContactsCsv(csv: string): { rows: ParsedRow[]; rejected: Rejection[] } {
  let records: { record: string[]; info: { records: number } }[];
  try {
    records = parse(csv, { bom: true, info: true, relax_column_count: true, skip_empty_lines: true }) as unknown as typeof records;
  } catch (error) {
    if (error instanceof CsvError) throw badRequest(`Malformed CSV: ${error.message}`);
    throw error;
  }
  const [header, ...data] = records;
  if (!header) throw badRequest('The CSV is empty: it needs a header row');
  if (data.length > MAX_IMPORT_ROWS) throw new HttpError(413, `Too many rows: at most ${MAX_IMPORT_ROWS} per import`);
  const columns = headerColumns(header.record);

  const rows: ParsedRow[] = [];
  const rejected: Rejection[] = [];
  const firstRowOfEmail = new Map<string, number>();
  for (const { record, info } of data) {
    const row = info.records;
    const values = rowValues(columns, record);
    if (typeof values === 'string') {
      rejected.push({ row, reason: values });
      continue;
    }
    const key = values.email.toLowerCase();
    const first = firstRowOfEmail.get(key);
    if (first !== undefined) {
      rejected.push({ row, reason: `Duplicate email ${values.email}: already on row ${first}` });
      continue;
    }
    firstRowOfEmail.set(key, row);
    rows.push({ row, values });
  }
  return { rows, rejected };
}
