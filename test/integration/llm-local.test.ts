import { beforeAll, describe, expect, it } from 'vitest';
import { defaultAgentConfig } from '../../domain/agent-config';
import type { ChatEvent, ChatRequest, ChatTool } from '../../platform/adapters/llm/chat-model';
import { createLocalChatModel } from '../../platform/adapters/llm/chat-model-local';
import { ModelDeadlineError } from '../../platform/adapters/llm/chat-model-openai';
import { LocalModelError, localLlm } from '../../platform/adapters/llm/llm-local';
import { LocalWriter, localNotice } from '../../platform/adapters/llm/llm-writer-local';
import { hasLocalModel, localModelConfig } from '../support/local-model';

// The real local model (SmolLM2-135M-Instruct Q4_1 on node-llama-cpp's prebuilt CPU binaries), loaded
// once per file; each runner below has its own small context on the same weights.

const present = hasLocalModel();
const config = localModelConfig({ LLM_CALL_TIMEOUT_MS: '120000' });

async function collect(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

const ask = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  messages: [
    { role: 'system', content: 'You are a CRM assistant.' },
    { role: 'user', content },
  ],
  tools: [],
  maxTokens: 16,
  signal: AbortSignal.timeout(120_000),
  ...extra,
});

const tools: ChatTool[] = [
  {
    name: 'get_weather',
    description: 'Get the current weather in a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['C', 'F'] } },
      required: ['city'],
    },
  },
  {
    name: 'search_contacts',
    description: 'Search CRM contacts by name.',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
];

describe.skipIf(!present)('the local model', () => {
  beforeAll(() => localLlm(config).load(), 120_000);

  it('streams its text token by token, then finishes once', async () => {
    const model = createLocalChatModel(config);
    expect(model.name).toBe('local:SmolLM2-135M-Instruct-Q4_1');
    const events = await collect(model.stream(ask('Name three colours.')));
    const deltas = events.filter((e) => e.type === 'text-delta');
    expect(deltas.length).toBeGreaterThanOrEqual(5);
    expect(
      deltas
        .map((d) => d.delta)
        .join('')
        .trim(),
    ).not.toBe('');
    expect(events.filter((e) => e.type === 'finish')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      reason: expect.stringMatching(/^(stop|length)$/),
      usage: { outputTokens: expect.any(Number) },
    });
  });

  it('calls a tool under the grammar, with an input that tool accepts', async () => {
    const model = createLocalChatModel(config);
    const events = await collect(model.stream(ask('What is the weather in Paris?', { tools, maxTokens: 80 })));
    expect(events.filter((e) => e.type === 'text-delta')).toEqual([]);
    const calls = events.filter((e) => e.type === 'tool-call').map((e) => e.call);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      id: expect.stringMatching(/^call_/),
      name: 'get_weather',
      input: { city: expect.stringMatching(/paris/i) },
    });
    const input = calls[0]!.input as Record<string, unknown>;
    expect(Object.keys(input).every((k) => k === 'city' || k === 'unit')).toBe(true);
    if ('unit' in input) expect(['C', 'F']).toContain(input.unit); // an optional property is a valid value or absent
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'tool-calls' });
  });

  it("stops at the caller's deadline", async () => {
    const model = createLocalChatModel(config);
    const started = performance.now();
    const run = collect(model.stream(ask('Write a long story about a lighthouse.', { maxTokens: 4000, signal: AbortSignal.timeout(400) })));
    await expect(run).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - started).toBeLessThan(5000);
    // The model is free again at once.
    expect((await collect(model.stream(ask('Say hi.', { maxTokens: 4 })))).at(-1)).toMatchObject({ type: 'finish' });
  });

  it('stops at LLM_CALL_TIMEOUT_MS with the deadline error both chat models throw', async () => {
    const bounded = localModelConfig({ LLM_CALL_TIMEOUT_MS: '1000' });
    await localLlm(bounded).load();
    const started = performance.now();
    const run = collect(createLocalChatModel(bounded).stream(ask('Write a long story about a lighthouse.', { maxTokens: 4000 })));
    await expect(run).rejects.toBeInstanceOf(ModelDeadlineError);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('ends within its deadline while a long prompt is still being read, and frees the model at once', async () => {
    // A prompt of about 3,000 tokens: node-llama-cpp reads a prompt in one go, and looks at the signal only between tokens it writes.
    const bounded = localModelConfig({ LLM_CALL_TIMEOUT_MS: '1000', LLM_LOCAL_CONTEXT_SIZE: '4096' });
    const llm = localLlm(bounded);
    await llm.load();
    const accounts = Array.from(
      { length: 120 },
      (_, i) => `Account ${i}: Acme ${i} Robotics, industry manufacturing, revenue ${i * 1000}.`,
    );
    const started = performance.now();
    const long = llm.run({
      messages: [
        { type: 'system', text: accounts.join('\n') },
        { type: 'user', text: 'Summarize.' },
      ],
      maxTokens: 400,
    });
    await expect(long).rejects.toMatchObject({ code: 'timeout' });
    expect(performance.now() - started).toBeLessThan(1000 + 1500);
    // The model is free again within one piece of the prompt, not after the rest of it (timed by the model's
    // own state, not by a second call, whose speed depends on the machine's load).
    const freed = performance.now();
    while (llm.running && performance.now() - freed < 5000) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(llm.running).toBe(false);
    expect(performance.now() - freed).toBeLessThan(1500);
  });

  it('reports a reply cut at its token limit as length, with tools and without', async () => {
    const model = createLocalChatModel(config);
    for (const offered of [[], tools]) {
      const events = await collect(model.stream(ask('Write a long story about a lighthouse keeper.', { tools: offered, maxTokens: 3 })));
      expect(events.filter((e) => e.type === 'finish')).toEqual([expect.objectContaining({ type: 'finish', reason: 'length' })]);
    }
  });

  it('answers in words, never with a tool call written as text, when a step after tool calls offers no tools', async () => {
    const model = createLocalChatModel(config);
    const events = await collect(
      model.stream({
        messages: [
          { role: 'system', content: 'You are a CRM assistant.' },
          { role: 'user', content: 'Find the contact Ann Lee.' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'search_contacts', input: { query: 'Ann Lee' } }] },
          { role: 'tool', toolCallId: 'c1', content: '[{"name":"Ann Lee","email":"ann@acme.example"}]' },
        ],
        tools: [],
        maxTokens: 120,
        signal: AbortSignal.timeout(120_000),
      }),
    );
    const text = events.map((e) => (e.type === 'text-delta' ? e.delta : '')).join('');
    expect(text.trim()).not.toBe('');
    expect(text).not.toMatch(/"type"\s*:\s*"tool_call"|"name"\s*:\s*"search_contacts"|^\s*\{/);
    expect(events.filter((e) => e.type === 'tool-call')).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: expect.stringMatching(/^(stop|length)$/) });
  });

  it('refuses a call when its queue is full, and serves the ones waiting in order', async () => {
    const queued = localModelConfig({ LLM_LOCAL_QUEUE_LIMIT: '1', LLM_CALL_TIMEOUT_MS: '120000' });
    const llm = localLlm(queued);
    await llm.load();
    const stop = new AbortController();
    const story = { messages: [{ type: 'user' as const, text: 'Write a long story about a lighthouse.' }], maxTokens: 4000 };
    const running = llm.run({ ...story, signal: stop.signal });
    const waiting = llm.run({ messages: [{ type: 'user', text: 'Say hi.' }], maxTokens: 4 });
    expect(llm.waiting).toBe(1);
    const refused = llm.run({ messages: [{ type: 'user', text: 'Say hi.' }], maxTokens: 4 });
    await expect(refused).rejects.toBeInstanceOf(LocalModelError);
    await expect(refused).rejects.toMatchObject({ code: 'busy' });
    stop.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect((await waiting).outputTokens).toBeGreaterThan(0);
    expect(llm.waiting).toBe(0);
  });

  it("reads a prompt ahead while idle: the call on it then reads only its last token, and another conversation's prompt made ahead is ignored", async () => {
    const own = localModelConfig({ LLM_CALL_TIMEOUT_MS: '120000', LLM_LOCAL_CONTEXT_SIZE: '1024' });
    const llm = localLlm(own);
    await llm.load();
    const model = createLocalChatModel(own);
    const idle = async () => {
      for (const deadline = Date.now() + 60_000; llm.running; ) {
        if (Date.now() > deadline) throw new Error('the prompt read ahead did not end within 60 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const finish = async (request: ChatRequest) => {
      const last = (await collect(model.stream(request))).at(-1);
      if (last?.type !== 'finish') throw new Error('no finish');
      return last.usage!;
    };
    const conversation = (words: string) => ({
      ...ask(words),
      messages: [
        { role: 'system' as const, content: 'You answer for the front desk of a dental clinic. Be brief.' },
        { role: 'user' as const, content: words },
      ],
    });
    const first = conversation('When do you open on Saturdays?');
    model.prefill!(first, true);
    expect(llm.running).toBe(true);
    await idle();
    const read = await finish(first);
    // All but the prompt's last token, which the call reads to sample its first answer token from.
    expect(read.inputTokens).toBeGreaterThan(20);
    expect(read.cachedInputTokens).toBeGreaterThanOrEqual(read.inputTokens! - 1);

    // Made ahead without `opening`, another conversation's prompt leaves this one's context alone.
    const other = { ...first, messages: [{ role: 'system' as const, content: 'You plan trips to the mountains.' }, first.messages[1]!] };
    model.prefill!(other);
    await idle();
    const again = await finish(first);
    expect(again.cachedInputTokens).toBeGreaterThanOrEqual(again.inputTokens! - 1);
  });

  it('writes a version comparison whose first line says which model wrote it', async () => {
    const writer = new LocalWriter(config);
    const base = defaultAgentConfig();
    let text = '';
    for await (const piece of writer.compareVersions({
      agentName: 'Front desk',
      from: { version: 1, published: true, config: base, instruction_builder_inputs: null },
      to: { version: 2, published: false, config: { ...base, first_message: 'Hello' }, instruction_builder_inputs: null },
    }))
      text += piece;
    const [first, ...rest] = text.split('\n');
    expect(first).toBe(localNotice('local:SmolLM2-135M-Instruct-Q4_1'));
    expect(first).toContain('SmolLM2-135M-Instruct-Q4_1');
    expect(rest.join('\n').trim()).not.toBe('');
  });
});
