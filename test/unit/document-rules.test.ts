import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import { CreateCampaignBody } from '../../api/schemas/campaigns';
import { criteriaProblems } from '../../domain/icp-criteria';
import { loadConfig } from '../../platform/core/config';
import { createLogger } from '../../platform/core/logger';

// Rules between fields that the document states as anyOf: each must take exactly what the code takes.
const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: '.data' });
const { document } = createApp({ config, logger: createLogger('silent'), storage: { driver: 'local' } } as unknown as AppDeps);
type Schema = { anyOf?: unknown[]; properties: Record<string, { anyOf?: unknown[] }> };
const schemas = document.components?.schemas as Record<string, Schema>;
const ajv = new Ajv2020({ strict: false });

const pick = <T>(options: T[]): T => options[Math.floor(Math.random() * options.length)]!;
const AGENT = '3f1c2b9e-8a4d-4e6f-9b0a-1c2d3e4f5a6b';

describe('rules the document states as anyOf', () => {
  it.each(['IcpProfileCreate', 'IcpProfilePatch'])(
    '%s: at least one criterion that is not an exclusion weighs more than 0, over 20,000 random lists',
    (name) => {
      const { anyOf } = schemas[name]!.properties.criteria!;
      expect(anyOf).toHaveLength(2);
      const validate = ajv.compile({ type: 'array', anyOf });
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
    const operation = document.paths?.['/campaign/campaigns']?.post as {
      requestBody: { content: Record<string, { schema: Schema }> };
    };
    const { anyOf } = operation.requestBody.content['application/json']!.schema;
    expect(anyOf).toHaveLength(2);
    const validate = ajv.compile({ type: 'object', anyOf });
    for (let i = 0; i < 5_000; i++) {
      const contacts = Array.from({ length: Math.floor(Math.random() * 3) }, () => ({
        phone_numbers: ['+15555550100'],
        ...pick([{}, { agent_id: AGENT }]),
      }));
      const body = { name: 'c', ...pick([{}, { agent_id: AGENT }]), ...pick([{}, { contacts }]) };
      const codeTakes = CreateCampaignBody.safeParse(body).success;
      expect(validate(body), JSON.stringify(body)).toBe(codeTakes);
    }
  });
});
