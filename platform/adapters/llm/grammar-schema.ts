import type { GbnfJsonSchema } from 'node-llama-cpp';

/**
 * A tool's JSON Schema turned into the subset node-llama-cpp compiles to a grammar. What the grammar
 * cannot state (patterns, numeric bounds, most formats) is dropped: the tool still validates its input.
 * The grammar writes every property, so an optional one may also be null, and `dropOptionalNulls`
 * takes those nulls out again, as if the model had left the property away.
 */

type Schema = Record<string, unknown>;

const ANY: GbnfJsonSchema = {
  oneOf: [{ type: ['string', 'number', 'boolean', 'null'] }, { type: 'object', additionalProperties: true }, { type: 'array' }],
};
const SCALARS = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const FORMATS = new Set(['date-time', 'time', 'date']);

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

export function toGrammarSchema(schema: unknown): GbnfJsonSchema {
  if (!isSchema(schema)) return ANY;
  const converted = convert(schema);
  if (isSchema(schema.$defs)) {
    const defs = Object.fromEntries(Object.entries(schema.$defs).map(([name, def]) => [name, convert(def)]));
    return { ...converted, $defs: defs } as GbnfJsonSchema;
  }
  return converted;
}

function convert(schema: unknown): GbnfJsonSchema {
  if (!isSchema(schema)) return ANY;
  const description = typeof schema.description === 'string' ? { description: schema.description } : {};
  if (typeof schema.$ref === 'string')
    return schema.$ref.startsWith('#/$defs/') ? ({ $ref: schema.$ref, ...description } as GbnfJsonSchema) : ANY;
  if ('const' in schema) return { const: schema.const as string | number | boolean | null, ...description };
  if (Array.isArray(schema.enum)) return { enum: schema.enum as (string | number | boolean | null)[], ...description };
  const alternatives = (schema.oneOf ?? schema.anyOf) as unknown[] | undefined;
  if (Array.isArray(alternatives)) return { oneOf: alternatives.map(convert), ...description };
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  if (types.length > 1) {
    if (types.every((t) => SCALARS.has(t)))
      return { type: types as ('string' | 'number' | 'integer' | 'boolean' | 'null')[], ...description };
    return { oneOf: types.map((type) => convert({ ...schema, type })), ...description };
  }
  const type = types[0] ?? (isSchema(schema.properties) ? 'object' : isSchema(schema.items) ? 'array' : undefined);
  switch (type) {
    case 'object': {
      const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
      const properties = Object.fromEntries(
        Object.entries(isSchema(schema.properties) ? schema.properties : {}).map(([name, property]) => {
          const value = convert(property);
          return [name, required.has(name) ? value : { oneOf: [value, { type: 'null' }] }];
        }),
      );
      const extra = schema.additionalProperties;
      const additionalProperties =
        extra === true || (extra === undefined && Object.keys(properties).length === 0) ? true : isSchema(extra) ? convert(extra) : false;
      return { type: 'object', properties, required: Object.keys(properties), additionalProperties, ...description } as GbnfJsonSchema;
    }
    case 'array':
      return {
        type: 'array',
        ...(isSchema(schema.items) ? { items: convert(schema.items) } : {}),
        ...(Array.isArray(schema.prefixItems) ? { prefixItems: schema.prefixItems.map(convert) } : {}),
        ...(typeof schema.minItems === 'number' ? { minItems: schema.minItems } : {}),
        ...(typeof schema.maxItems === 'number' ? { maxItems: schema.maxItems } : {}),
        ...description,
      };
    case 'string':
      if (typeof schema.format === 'string' && FORMATS.has(schema.format))
        return { type: 'string', format: schema.format as 'date-time' | 'time' | 'date', ...description };
      return {
        type: 'string',
        ...(typeof schema.minLength === 'number' ? { minLength: schema.minLength } : {}),
        ...(typeof schema.maxLength === 'number' ? { maxLength: schema.maxLength } : {}),
        ...description,
      };
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null':
      return { type, ...description };
    default:
      return ANY;
  }
}

/** Removes the nulls the grammar let the model write for optional properties (see toGrammarSchema). */
export function dropOptionalNulls(value: unknown, schema: unknown): unknown {
  if (!isSchema(schema)) return value;
  if (Array.isArray(value)) return isSchema(schema.items) ? value.map((item) => dropOptionalNulls(item, schema.items)) : value;
  if (!isSchema(value) || !isSchema(schema.properties)) return value;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const properties = schema.properties;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([name, v]) => !(v === null && name in properties && !required.has(name)))
      .map(([name, v]) => [name, name in properties ? dropOptionalNulls(v, properties[name]) : v]),
  );
}
