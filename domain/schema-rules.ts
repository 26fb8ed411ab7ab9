// Rules between the fields of one body (at least one of, exactly one of, ...) as the document states them. Each is
// a `not` of the bodies that break it, added to the body's one object schema: validators and fuzzers follow
// `not`, while client generators ignore it and keep the body one model (an anyOf/oneOf of required sets makes
// openapi-python-client emit ContactCreateType0/1/2, or `Any`). The server checks the same rule in code (422).
// Plain JSON Schema, no zod: domain schemas attach it with `.meta`, api schemas with `.openapi`.

type JsonSchema = Record<string, unknown>;

/** A field left out: `{not: {}}` matches no value (openapi-python-client refuses the boolean schema `false`). */
export const ABSENT: JsonSchema = { not: {} };

/** The bodies that give none of `fields`: each left out, or one of `blank` (e.g. null or ""). */
export function givesNone(fields: readonly string[], blank: readonly unknown[] = []): JsonSchema {
  const missing = blank.length > 0 ? { enum: [...blank] } : ABSENT;
  return { properties: Object.fromEntries(fields.map((field) => [field, missing])) };
}

/** The bodies that give two or more of `fields` (each `required` names its fields in `properties` too, as linters want). */
export function givesSeveral(fields: readonly string[]): JsonSchema {
  const pairs = fields.flatMap((a, i) => fields.slice(i + 1).map((b) => ({ required: [a, b], properties: { [a]: {}, [b]: {} } })));
  return pairs.length === 1 ? pairs[0]! : { anyOf: pairs };
}

/** The keyword that refuses every body matching one of `breaches`; spread into the object schema. */
export function refusing(...breaches: JsonSchema[]): { not: JsonSchema } {
  // A breach that is only an anyOf (givesSeveral) joins the list as its members.
  const flat = breaches.flatMap((b) => (Object.keys(b).length === 1 && Array.isArray(b.anyOf) ? (b.anyOf as JsonSchema[]) : [b]));
  if (flat.length === 0) throw new Error('refusing: name at least one breach');
  return { not: flat.length === 1 ? flat[0]! : { anyOf: flat } };
}

/** At least one of `fields` given (not left out, and not one of `blank`). */
export const atLeastOneOf = (fields: readonly string[], blank: readonly unknown[] = []) => refusing(givesNone(fields, blank));

/** Exactly one of `fields` given. */
export const exactlyOneOf = (fields: readonly string[]) => refusing(givesNone(fields), givesSeveral(fields));
