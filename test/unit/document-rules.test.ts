import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import { VersionCreateBody } from '../../api/schemas/agents';
import { CreateCampaignBody } from '../../api/schemas/campaigns';
import { CreateContactBody } from '../../api/schemas/contacts';
import { CreateResearchRunBody } from '../../api/schemas/intelligence';
import { ReplyBody } from '../../api/schemas/outreach-unibox';
import { AgentConfig } from '../../domain/agent-config';
import { criteriaProblems } from '../../domain/icp-criteria';
import { loadConfig } from '../../platform/core/config';
import { createLogger } from '../../platform/core/logger';

// Rules between fields that the document states as a `not` of the bodies breaking them (domain/schema-rules.ts):
// each must take exactly what the code takes, and no request body states such a rule as variants.
const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: '.data' });
const { document } = createApp({ config, logger: createLogger('silent'), storage: { driver: 'local' } } as unknown as AppDeps);
type Json = Record<string, unknown>;
const schemas = document.components?.schemas as Record<string, Json>;
const ajv = new Ajv2020({ strict: false, validateFormats: false, logger: false });
const resolve = (schema: Json): Json =>
  typeof schema.$ref === 'string' ? schemas[schema.$ref.replace('#/components/schemas/', '')]! : schema;
const requestSchema = (path: string, method: string): Json => {
  const operation = (document.paths as Record<string, Record<string, Json>>)[path]![method]!;
  return resolve((operation.requestBody as { content: Record<string, { schema: Json }> }).content['application/json']!.schema);
};
/** The document's rule alone (its `not`), so a body need not satisfy every other field's constraints. */
const ruleOf = (schema: Json) => {
  expect(schema.not, 'the rule is stated as a not').toBeTypeOf('object');
  return ajv.compile({ not: schema.not });
};

const pick = <T>(options: T[]): T => options[Math.floor(Math.random() * options.length)]!;
const some = (options: Record<string, unknown[]>) =>
  Object.fromEntries(
    Object.entries(options).flatMap(([field, values]) => {
      const value = pick([undefined, ...values]);
      return value === undefined ? [] : [[field, value]];
    }),
  );
const AGENT = '3f1c2b9e-8a4d-4e6f-9b0a-1c2d3e4f5a6b';

describe('rules between fields, as the document states them', () => {
  it('no request body states a rule between fields as variants (generators would split the body into several models)', () => {
    const found: string[] = [];
    const visit = (node: unknown, where: string, seen: Set<unknown>): void => {
      if (!node || typeof node !== 'object' || seen.has(node)) return;
      seen.add(node);
      if (Array.isArray(node)) {
        for (const item of node) visit(item, where, seen);
        return;
      }
      const schema = resolve(node as Json);
      for (const key of ['anyOf', 'oneOf'] as const) {
        for (const branch of (schema[key] as Json[] | undefined) ?? []) {
          const b = resolve(branch);
          // Variants of different types (an object or a string) are no rule between fields; variants naming fields are.
          const objectLike = (b.type === undefined || b.type === 'object') && ('required' in b || 'properties' in b);
          // A tagged union is fine: each variant names itself by a field's value (type: "url", provider: "twilio").
          const tagged = Object.values((b.properties ?? {}) as Record<string, Json>).some((p) => 'const' in p || 'enum' in p);
          if (objectLike && !tagged) found.push(`${where} ${key} ${JSON.stringify(b).slice(0, 80)}`);
        }
      }
      for (const [key, value] of Object.entries(schema)) if (key !== 'not') visit(value, where, seen);
    };
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Json>>))
      for (const [method, operation] of Object.entries(item)) {
        const content = (operation.requestBody as { content?: Record<string, { schema: Json }> } | undefined)?.content ?? {};
        for (const media of Object.values(content)) visit(media.schema, `${method.toUpperCase()} ${path}`, new Set());
      }
    expect(found).toEqual([]);
  });

  it('ContactCreate: at least one of first_name, last_name or email, not null or empty', () => {
    const schema = schemas.ContactCreate!;
    expect(schema.anyOf).toBeUndefined();
    const validate = ruleOf(schema);
    for (let i = 0; i < 2_000; i++) {
      const body = some({
        first_name: [null, '', 'Ada'],
        last_name: [null, '', 'Lovelace'],
        email: [null, 'ada@example.com'],
        title: ['CEO'],
      });
      expect(validate(body), JSON.stringify(body)).toBe(CreateContactBody.safeParse(body).success);
    }
    expect(validate({})).toBe(false);
  });

  it('ResearchRunCreate: exactly one of account_id, domain or website', () => {
    const validate = ruleOf(schemas.ResearchRunCreate!);
    for (let i = 0; i < 1_000; i++) {
      const body = some({ account_id: [AGENT], domain: ['a.example'], website: ['https://a.example'] });
      expect(validate(body), JSON.stringify(body)).toBe(CreateResearchRunBody.safeParse(body).success);
    }
  });

  it('a new agent version: exactly one of config or base_version', () => {
    const validate = ruleOf(requestSchema('/core/agents/{id}/versions', 'post'));
    for (let i = 0; i < 500; i++) {
      const body = some({ config: [{}], base_version: [1] });
      expect(validate(body), JSON.stringify(body)).toBe(VersionCreateBody.safeParse(body).success);
    }
  });

  it('a draft update: config or instruction_builder_inputs (services/agent-versions.ts answers neither 400)', () => {
    const validate = ruleOf(requestSchema('/core/agents/{id}/versions/{version}', 'put'));
    for (const body of [{}, { config: {} }, { instruction_builder_inputs: {} }, { config: {}, instruction_builder_inputs: {} }])
      expect(validate(body), JSON.stringify(body)).toBe(Object.keys(body).length > 0);
  });

  it('a transfer destination: exactly one of phone_number or sip_uri', () => {
    const tools = (resolve(schemas.AgentConfig!).properties as Record<string, Json>).tools!;
    const transfer = (resolve(tools.items as Json).oneOf as Json[]).map(resolve).find((t) => {
      const type = (t.properties as Record<string, Json>).type!;
      return type.const === 'transfer_call' || (type.enum as unknown[] | undefined)?.includes('transfer_call');
    })!;
    const validate = ruleOf(resolve((transfer.properties as Record<string, Json>).destinations!.items as Json));
    for (let i = 0; i < 500; i++) {
      const destination = some({ phone_number: ['+14155552671'], sip_uri: ['sip:desk@pbx.example'], description: ['Desk'] });
      const config = { tools: [{ type: 'transfer_call', name: 'transfer', description: 'To a person', destinations: [destination] }] };
      expect(validate(destination), JSON.stringify(destination)).toBe(AgentConfig.safeParse(config).success);
    }
  });

  it('an outreach reply: exactly one of body or text, at most one of body_html or html', () => {
    const validate = ruleOf(schemas.OutreachReply!);
    for (let i = 0; i < 2_000; i++) {
      const body = some({ body: ['Hi'], text: ['Hi'], body_html: [null, '<p>Hi</p>'], html: [null, '<p>Hi</p>'] });
      expect(validate(body), JSON.stringify(body)).toBe(ReplyBody.safeParse(body).success);
    }
  });

  it('a new credential: without a refresher, a manual policy and an empty input (services/credentials/crud.ts answers 400)', () => {
    const validate = ruleOf(requestSchema('/workflow/credentials', 'post'));
    for (let i = 0; i < 2_000; i++) {
      const body = {
        name: 'c',
        ...some({
          refresher_workflow_id: [null, AGENT],
          refresh_policy: [{ type: 'manual' }, { type: 'interval', every_seconds: 3600 }],
          refresh_input: [{}, { scope: 'all' }],
        }),
      } as { refresher_workflow_id?: string | null; refresh_policy?: { type: string }; refresh_input?: object };
      // checkRefreshFields: a refresher takes any policy and input; without one the policy is manual and the input empty.
      const codeTakes =
        Boolean(body.refresher_workflow_id) ||
        ((body.refresh_policy?.type ?? 'manual') === 'manual' && Object.keys(body.refresh_input ?? {}).length === 0);
      expect(validate(body), JSON.stringify(body)).toBe(codeTakes);
    }
  });

  it.each(['IcpProfileCreate', 'IcpProfilePatch'])(
    '%s: at least one criterion that is not an exclusion weighs more than 0, over 20,000 random lists',
    (name) => {
      const criteriaSchema = (schemas[name]!.properties as Record<string, Json>).criteria!;
      expect(criteriaSchema.anyOf).toBeUndefined();
      const validate = ruleOf(criteriaSchema);
      for (let i = 0; i < 20_000; i++) {
        const criteria = Array.from({ length: 1 + Math.floor(Math.random() * 4) }, () => ({
          type: 'custom',
          values: ['x'],
          weight: pick([0, 0, 0.5, 7]),
          ...pick([{}, { exclude: true }, { exclude: false }]),
        }));
        const codeTakes = !criteriaProblems(criteria).some((problem) => problem.path.length === 0);
        expect(validate(criteria), JSON.stringify(criteria)).toBe(codeTakes);
      }
    },
  );

  it('a campaign names an agent, or each of its contacts does, over 5,000 random bodies', () => {
    const validate = ruleOf(requestSchema('/campaign/campaigns', 'post'));
    for (let i = 0; i < 5_000; i++) {
      const contacts = Array.from({ length: Math.floor(Math.random() * 3) }, () => ({
        phone_numbers: ['+14155552671'],
        ...pick([{}, { agent_id: AGENT }]),
      }));
      const body = { name: 'c', ...pick([{}, { agent_id: AGENT }]), ...pick([{}, { contacts }]) };
      expect(validate(body), JSON.stringify(body)).toBe(CreateCampaignBody.safeParse(body).success);
    }
  });
});
