import { getOpenApiMetadata } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';

// Request fields that carry secret material (a credential's value, a mailbox password, a token) are
// declared with `secretField`: the document marks them writeOnly, and a 422 never echoes what was sent
// in them, neither as the issue's own `input` nor inside a larger value an issue echoes.

/** What a 422 shows instead of a secret field's content. */
export const REDACTED_INPUT = '[redacted]';

/** Marks a request field as secret: `writeOnly` in the document, never echoed by a 422. */
export function secretField<T extends z.ZodType>(schema: T, description?: string): T {
  return schema.openapi({ writeOnly: true, ...(description ? { description } : {}) }) as T;
}

type Node = z.ZodType;
type Key = string | number;

/** A schema marked by secretField (through its wrappers: optional, nullable, default). */
const isSecret = (schema: Node): boolean => getOpenApiMetadata(schema).writeOnly === true;

/** The parts of zod's internal definition that the walk reads, by schema type. */
interface ZodDef {
  type: string;
  innerType: Node;
  in: Node;
  out: Node;
  getter: () => Node;
  shape: Record<string, Node>;
  catchall?: Node;
  valueType: Node;
  element: Node;
  items: Node[];
  rest?: Node;
  options: Node[];
  left: Node;
  right: Node;
}

/** The schemas that may describe `key` of a value described by `schema`. */
function childrenOf(schema: Node, key: Key): Node[] {
  const def = (schema as unknown as { _zod: { def: ZodDef } })._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return childrenOf(def.innerType, key);
    case 'pipe':
      return [...childrenOf(def.in, key), ...childrenOf(def.out, key)];
    case 'lazy':
      return childrenOf(def.getter(), key);
    case 'object':
      return Object.hasOwn(def.shape, key) ? [def.shape[key] as Node] : def.catchall ? [def.catchall] : [];
    case 'record':
      return [def.valueType];
    case 'array':
      return typeof key === 'number' ? [def.element] : [];
    case 'tuple':
      return typeof key === 'number' ? [def.items[key] ?? def.rest].filter((item): item is Node => item !== undefined) : [];
    case 'union':
      return def.options.flatMap((option: Node) => childrenOf(option, key));
    case 'intersection':
      return [...childrenOf(def.left, key), ...childrenOf(def.right, key)];
    default:
      return [];
  }
}

/** `value` with the content of every secret field inside it replaced. */
function scrub(schemas: Node[], value: unknown): unknown {
  if (value === undefined || value === null) return value;
  if (schemas.some(isSecret)) return REDACTED_INPUT;
  if (schemas.length === 0 || typeof value !== 'object') return value;
  if (Array.isArray(value))
    return value.map((item, i) =>
      scrub(
        schemas.flatMap((s) => childrenOf(s, i)),
        item,
      ),
    );
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      scrub(
        schemas.flatMap((s) => childrenOf(s, k)),
        v,
      ),
    ]),
  );
}

/**
 * What a 422 may echo of `input`, the value found at `path` of a request part described by `schema`:
 * REDACTED_INPUT when the path is (inside) a secret field, else the value with its secret fields replaced.
 */
export function echoableInput(schema: Node, path: readonly Key[], input: unknown): unknown {
  let schemas = [schema];
  for (const key of path) {
    if (schemas.some(isSecret)) return input === null || input === undefined ? input : REDACTED_INPUT;
    schemas = schemas.flatMap((s) => childrenOf(s, key));
  }
  return scrub(schemas, input);
}
