// Custom data tables: names, property types, keys and the replace report. Pure rules; the merge
// itself is SQL (db/custom-data.ts).

/** Table and property names: SQL identifiers that need no quoting, so the view reads naturally. */
export const NAME_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
export const NAME_RULE = 'must start with a lower-case letter and hold only a-z, 0-9 and _ (at most 63 characters)';

export const PROPERTY_TYPES = ['string', 'number', 'integer', 'boolean', 'timestamp', 'json'] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];
/** Key properties take scalar types only. */
export const KEY_TYPES: readonly PropertyType[] = ['string', 'number', 'integer', 'boolean', 'timestamp'];

export interface PropertyDeclaration {
  name: string;
  type: PropertyType;
  description: string;
}

export const MAX_KEY_PROPERTIES = 8;
export const MAX_PROPERTIES = 200;

/** ISO 8601 date-time with an explicit offset: the only timestamps read the same on every server. */
export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)$/;

/** True when a present, non-null value has the declared type (null and absent are never mismatches). */
export function hasType(value: unknown, type: PropertyType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'timestamp':
      return typeof value === 'string' && TIMESTAMP_PATTERN.test(value) && !Number.isNaN(Date.parse(value.replace(' ', 'T')));
    case 'json':
      return true;
  }
}

/** The canonical text of a row's key: the JSON array of its key values, or null when one is missing. */
export function keyOf(row: Record<string, unknown>, keyProperties: readonly string[]): string | null {
  const values: unknown[] = [];
  for (const p of keyProperties) {
    const v = row[p];
    if (v === undefined || v === null) return null;
    values.push(v);
  }
  return JSON.stringify(values);
}

export interface WriteReport {
  table: string;
  received: number;
  written: number;
  unchanged: number;
  tombstoned: number;
  live_before: number;
  live_after: number;
  warnings: string[];
  type_mismatches: Record<string, number>;
  undeclared_properties: string[];
  view: string;
}

/** What the snapshot says before it is applied: rows by key (last one wins) and the advisory findings. */
export interface PreparedRows {
  rows: Map<string, Record<string, unknown>>;
  received: number;
  duplicates: number;
  duplicateKeys: string[];
  missingKey: number;
  typeMismatches: Record<string, number>;
  undeclared: string[];
}

export function prepareRows(
  rows: readonly Record<string, unknown>[],
  keyProperties: readonly string[],
  properties: readonly PropertyDeclaration[],
): PreparedRows {
  const declared = new Map(properties.map((p) => [p.name, p.type]));
  const byKey = new Map<string, Record<string, unknown>>();
  const mismatches: Record<string, number> = {};
  const undeclared = new Set<string>();
  const duplicateKeys: string[] = [];
  let duplicates = 0;
  let missingKey = 0;
  for (const row of rows) {
    for (const name in row) {
      const value = row[name];
      const type = declared.get(name);
      if (type === undefined) undeclared.add(name);
      else if (value !== null && !hasType(value, type)) mismatches[name] = (mismatches[name] ?? 0) + 1;
    }
    const key = keyOf(row, keyProperties);
    if (key === null) {
      missingKey++;
      continue;
    }
    if (byKey.has(key)) {
      duplicates++;
      if (duplicateKeys.length < 5) duplicateKeys.push(key);
    }
    byKey.set(key, row);
  }
  return {
    rows: byKey,
    received: rows.length,
    duplicates,
    duplicateKeys,
    missingKey,
    typeMismatches: mismatches,
    undeclared: [...undeclared].sort(),
  };
}

/**
 * True when rows were sent but none holds the key: as a replace it would tombstone every live row, which
 * is never what such a snapshot means (an empty `rows` is how a table is emptied on purpose).
 */
export const emptiesByAccident = (prepared: PreparedRows): boolean => prepared.received > 0 && prepared.rows.size === 0;

/** The advisory warnings of a write: the apply has already happened when they are read. */
export function warningsOf(prepared: PreparedRows, keyProperties: readonly string[]): string[] {
  const warnings: string[] = [];
  if (prepared.duplicates > 0)
    warnings.push(
      `${prepared.duplicates} row(s) repeat a key seen earlier in the snapshot; the last row of each key was kept (e.g. ${prepared.duplicateKeys.join(', ')})`,
    );
  if (prepared.missingKey > 0)
    warnings.push(`${prepared.missingKey} row(s) lack a key property (${keyProperties.join(', ')}) and were skipped`);
  const mismatched = Object.keys(prepared.typeMismatches);
  if (mismatched.length > 0)
    warnings.push(`Values not of the declared type are stored as sent and read as null in the view: ${mismatched.sort().join(', ')}`);
  if (prepared.undeclared.length > 0)
    warnings.push(`Undeclared properties are stored but not in the view: ${prepared.undeclared.join(', ')}`);
  return warnings;
}

/** The schema holding an organization's views: one per organization, so names never collide. */
export const viewSchemaOf = (orgId: string) => `custom_data_${orgId.replace(/-/g, '')}`;
