/** One difference between two JSON values, at a path such as `llm.temperature` or `tools[1].url`. */
export interface JsonChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  from?: unknown;
  to?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const join = (base: string, key: string) => (base ? `${base}.${key}` : key);

/**
 * Field-by-field differences of two JSON documents, deepest first reached in key order (sorted, so the
 * output is deterministic). Arrays are compared index by index; a longer array shows added items.
 */
export function diffJson(a: unknown, b: unknown, path = ''): JsonChange[] {
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((key) => {
      const p = join(path, key);
      if (!(key in b)) return [{ path: p, kind: 'removed' as const, from: a[key] }];
      if (!(key in a)) return [{ path: p, kind: 'added' as const, to: b[key] }];
      return diffJson(a[key], b[key], p);
    });
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: JsonChange[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const p = `${path}[${i}]`;
      if (i >= b.length) out.push({ path: p, kind: 'removed', from: a[i] });
      else if (i >= a.length) out.push({ path: p, kind: 'added', to: b[i] });
      else out.push(...diffJson(a[i], b[i], p));
    }
    return out;
  }
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  return [{ path: path || '(root)', kind: 'changed', from: a, to: b }];
}

/** One line per change, e.g. `changed llm.temperature: 0.7 → 0.2`. */
export function describeChange(change: JsonChange): string {
  const show = (v: unknown) => JSON.stringify(v) ?? 'undefined';
  switch (change.kind) {
    case 'added':
      return `added ${change.path}: ${show(change.to)}`;
    case 'removed':
      return `removed ${change.path} (was ${show(change.from)})`;
    case 'changed':
      return `changed ${change.path}: ${show(change.from)} → ${show(change.to)}`;
  }
}
