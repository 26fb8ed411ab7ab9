import { describe, expect, it } from 'vitest';
import { AgentConfig, InstructionBuilderInputs, agentConfigJsonSchema, defaultAgentConfig } from '../../domain/agent-config';
import { describeChange, diffJson } from '../../platform/core/json-diff';

describe('AgentConfig', () => {
  it('fills every section with defaults', () => {
    const config = defaultAgentConfig();
    expect(config).toMatchObject({
      instructions: '',
      language: 'en-US',
      voice: { provider: 'elevenlabs', speed: 1 },
      llm: { temperature: 0.7, max_tokens: 1024 },
      tools: [],
      knowledge_base: { dataset_ids: [] },
      transfer: { enabled: false, rules: [] },
      limits: { max_duration_seconds: 1800, silence_timeout_seconds: 30 },
      recording: { enabled: true },
    });
  });

  it('accepts every kind of tool', () => {
    const parsed = AgentConfig.parse({
      language: 'pt-BR',
      tools: [
        { type: 'webhook', name: 'book_slot', description: 'Books a slot', url: 'https://api.example/book' },
        {
          type: 'transfer_call',
          name: 'to_sales',
          description: 'Sales',
          destinations: [{ phone_number: '+14155550100' }, { sip_uri: 'sip:desk@pbx.example' }],
        },
        { type: 'end_call' },
        { type: 'knowledge_base', name: 'faq', description: 'FAQ', dataset_ids: ['0190c0de-0000-7000-8000-000000000001'] },
      ],
    });
    expect(parsed.tools.map((t) => t.type)).toEqual(['webhook', 'transfer_call', 'end_call', 'knowledge_base']);
    expect(parsed.tools[0]).toMatchObject({ method: 'POST', timeout_seconds: 10 });
  });

  it.each([
    ['a language that is not BCP-47', { language: 'english please' }, ['language']],
    ['a temperature above 2', { llm: { temperature: 2.5 } }, ['llm', 'temperature']],
    ['a negative temperature', { llm: { temperature: -0.1 } }, ['llm', 'temperature']],
    ['an unknown tool type', { tools: [{ type: 'teleport', name: 'x' }] }, ['tools', 0, 'type']],
    [
      'a transfer rule to a number that is not E.164',
      { transfer: { rules: [{ condition: 'billing', destination: '555-0100' }] } },
      ['transfer', 'rules', 0, 'destination'],
    ],
    ['two tools with one name', { tools: [{ type: 'end_call' }, { type: 'end_call' }] }, ['tools']],
    ['a dataset id that is not a uuid', { knowledge_base: { dataset_ids: ['nope'] } }, ['knowledge_base', 'dataset_ids', 0]],
    ['an unknown field', { voice: { provider: 'openai', pitch: 3 } }, ['voice']],
    ['a call longer than two hours', { limits: { max_duration_seconds: 7201 } }, ['limits', 'max_duration_seconds']],
  ])('refuses %s', (_name, input, path) => {
    const result = AgentConfig.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.path).toEqual(path);
  });

  it('publishes its complete JSON Schema', () => {
    const schema = agentConfigJsonSchema() as { $schema: string; $ref: string; $defs: Record<string, any> };
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const root = schema.$defs[schema.$ref.split('/').pop()!];
    expect(Object.keys(root.properties)).toEqual(
      expect.arrayContaining([
        'instructions',
        'first_message',
        'language',
        'voice',
        'llm',
        'tools',
        'knowledge_base',
        'transfer',
        'end_call',
        'limits',
        'recording',
      ]),
    );
    expect(root.additionalProperties).toBe(false);
    expect(root.properties.llm.properties.temperature).toMatchObject({ minimum: 0, maximum: 2 });
    const toolTypes = root.properties.tools.items.oneOf.map((t: any) => t.properties.type.const);
    expect(toolTypes).toEqual(['webhook', 'transfer_call', 'end_call', 'knowledge_base']);
  });

  it('takes instruction builder inputs with a company name', () => {
    expect(InstructionBuilderInputs.safeParse({ company_name: 'Acme', goals: ['book visits'] }).success).toBe(true);
    expect(InstructionBuilderInputs.safeParse({ goals: ['book visits'] }).success).toBe(false);
  });
});

describe('diffJson', () => {
  it('lists changes field by field, in key order', () => {
    const a = { llm: { temperature: 0.7, model: 'm' }, tools: [{ name: 'a' }], first_message: 'Hi' };
    const b = { llm: { temperature: 0.2, model: 'm' }, tools: [{ name: 'a' }, { name: 'b' }], language: 'fr-FR' };
    expect(diffJson(a, b).map(describeChange)).toEqual([
      'removed first_message (was "Hi")',
      'added language: "fr-FR"',
      'changed llm.temperature: 0.7 → 0.2',
      'added tools[1]: {"name":"b"}',
    ]);
  });

  it('finds nothing between equal documents whatever their key order', () => {
    expect(diffJson({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toEqual([]);
  });
});
