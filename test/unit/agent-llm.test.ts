import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultAgentConfig } from '../../domain/agent-config';
import { loadConfig } from '../../platform/core/config';
import { BUILTIN_NOTICE, BuiltinWriter, OpenAiWriter, createLlmWriter, type CompareInput } from '../../platform/adapters/llm/llm';
import { LocalWriter } from '../../platform/adapters/llm/llm-writer-local';
import { startFakeLlmServer, type FakeLlm } from '../support/fake-llm-server';

const collect = async (pieces: AsyncIterable<string>) => {
  const out: string[] = [];
  for await (const piece of pieces) out.push(piece);
  return out;
};

const v1 = defaultAgentConfig();
const v2 = { ...v1, llm: { ...v1.llm, temperature: 0.2 }, first_message: 'Welcome to Acme' };
const input: CompareInput = {
  agentName: 'Front desk',
  from: { version: 1, published: true, config: v1, instruction_builder_inputs: null },
  to: { version: 2, published: false, config: v2, instruction_builder_inputs: { company_name: 'Acme' } },
};

describe('createLlmWriter', () => {
  it('is the built-in writer for every feature by default, the OpenAI-compatible one with LLM_BASE_URL', () => {
    for (const feature of ['compare', 'instructions', 'summary'] as const) {
      expect(createLlmWriter(loadConfig({}), feature)).toBeInstanceOf(BuiltinWriter);
      expect(createLlmWriter(loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:9/v1' }), feature)).toBeInstanceOf(OpenAiWriter);
    }
  });

  it('gives the local model the features LLM_LOCAL_FEATURES names, and only those', () => {
    const config = loadConfig({ LLM_LOCAL_FEATURES: 'compare, summary' });
    expect(createLlmWriter(config, 'compare')).toBeInstanceOf(LocalWriter);
    expect(createLlmWriter(config, 'summary')).toBeInstanceOf(LocalWriter);
    expect(createLlmWriter(config, 'instructions')).toBeInstanceOf(BuiltinWriter);
    expect(() => loadConfig({ LLM_LOCAL_FEATURES: 'compare,poems' })).toThrow(/LLM_LOCAL_FEATURES must be a comma-separated list/);
  });
});

describe('the built-in writer', () => {
  const writer = new BuiltinWriter();

  it('says in its first line that it is not an LLM, then lists every difference', async () => {
    const text = (await collect(writer.compareVersions(input))).join('');
    const lines = text.trim().split('\n');
    expect(lines[0]).toBe(BUILTIN_NOTICE);
    expect(lines[0]).toMatch(/not by an LLM/);
    expect(lines[1]).toBe('Agent "Front desk": version 1 (published) → version 2 (draft).');
    expect(lines.slice(2)).toEqual([
      '3 differences:',
      '- changed first_message: null → "Welcome to Acme"',
      '- changed llm.temperature: 0.7 → 0.2',
      '- added instruction_builder_inputs.company_name: "Acme"',
    ]);
  });

  it('says when there is no difference', async () => {
    const text = (await collect(writer.compareVersions({ ...input, to: { ...input.from, version: 3 } }))).join('');
    expect(text).toContain('No differences');
  });

  it('writes the same instructions from the same inputs, labelled as its own', async () => {
    const inputs = { company_name: 'Acme', goals: ['Book repairs'], faqs: [{ question: 'Open on Sunday?', answer: 'Yes' }] };
    const first = await writer.writeInstructions(inputs);
    expect(await writer.writeInstructions(inputs)).toBe(first);
    expect(first.split('\n')[0]).toContain(BUILTIN_NOTICE);
    expect(first).toContain('You are the voice assistant of Acme.');
    expect(first).toContain('- Book repairs');
    expect(first).toContain('Q: Open on Sunday?');
  });
});

describe('the OpenAI-compatible writer, against a local server speaking the protocol', () => {
  let fake: FakeLlm;
  let writer: OpenAiWriter;
  beforeAll(async () => {
    fake = await startFakeLlmServer();
    writer = new OpenAiWriter(fake.baseUrl, 'test-key', 'fake-model');
  });
  afterAll(() => fake?.close());

  it('streams the comparison piece by piece', async () => {
    const pieces = await collect(writer.compareVersions(input));
    expect(pieces).toEqual(['The fake LLM ', 'compared the ', 'two versions.']);
    const request = fake.requests.at(-1)!;
    expect(request.stream).toBe(true);
    expect(request.model).toBe('fake-model');
    expect(request.messages.at(-1)!.content).toContain('changed llm.temperature: 0.7 → 0.2');
  });

  it('writes instructions from the inputs', async () => {
    expect(await writer.writeInstructions({ company_name: 'Acme' })).toBe(fake.reply);
    expect(fake.requests.at(-1)!.messages.at(-1)!.content).toContain('"company_name": "Acme"');
  });

  it('fails when the provider does', async () => {
    fake.failWith = 500;
    try {
      await expect(writer.writeInstructions({ company_name: 'Acme' })).rejects.toThrow();
    } finally {
      fake.failWith = null;
    }
  });
});
