import os from 'node:os';
import { pathToFileURL } from 'node:url';
import type { ChatRequest } from '../platform/adapters/llm/chat-model';
import { replySchema, toHistory } from '../platform/adapters/llm/chat-model-local';
import { loadConfig } from '../platform/core/config';
import { type LocalLlm, localLlm, usableThreads } from '../platform/adapters/llm/llm-local';

// `npm run bench -- llm-local` (or `node --import tsx bench/llm-local.ts`): the local model's load time,
// time to first token and generation speed, for plain text and for a tool call under the JSON grammar,
// at each thread count in LLM_BENCH_THREADS (default "1,2"); then, on one thread, plain text's behind a
// conversation of 100 to 1,100 tokens already read (a long call's later turns). Prints the median of ROUNDS runs.

const ROUNDS = 3;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const TEXT: ChatRequest = {
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Write a short paragraph about the sea.' },
  ],
  tools: [],
  maxTokens: 128,
  temperature: 0.3,
  signal: new AbortController().signal,
};

const TOOL_CALL: ChatRequest = {
  messages: [
    { role: 'system', content: 'You are a CRM assistant.' },
    { role: 'user', content: 'What is the weather in Paris?' },
  ],
  tools: [
    {
      name: 'get_weather',
      description: 'Get the current weather in a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
    {
      name: 'search_contacts',
      description: 'Search CRM contacts by name.',
      parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    },
  ],
  maxTokens: 80,
  signal: new AbortController().signal,
};

function withQuestionNumber(request: ChatRequest, n: number): ChatRequest {
  const messages = request.messages.map((m) => (m.role === 'user' ? { ...m, content: `(Question ${n}) ${m.content}` } : m));
  return { ...request, messages };
}

/** Through the runner, so a tool call's first token counts too (the ChatModel hands the call over whole). */
async function measure(llm: LocalLlm, request: ChatRequest) {
  const started = performance.now();
  let first: number | undefined;
  let output = { inputTokens: 0, outputTokens: 0 };
  const tools = request.tools;
  for await (const piece of llm.stream({
    messages: toHistory(request.messages, tools),
    schema: tools.length ? replySchema(tools) : undefined,
    maxTokens: request.maxTokens!,
    temperature: request.temperature,
  })) {
    if (piece.type === 'text') first ??= performance.now() - started;
    else output = piece.output;
  }
  const total = performance.now() - started;
  return { ttftMs: first ?? total, totalMs: total, ...output };
}

export async function benchLlmLocal() {
  const threadCounts = (process.env.LLM_BENCH_THREADS ?? '1,2').split(',').map(Number);
  const results: Record<string, unknown>[] = [];
  for (const threads of threadCounts) {
    const config = loadConfig({ ...process.env, LLM_LOCAL_THREADS: String(threads), LLM_CALL_TIMEOUT_MS: '600000' });
    const loadStarted = performance.now();
    await localLlm(config).load();
    const loadMs = performance.now() - loadStarted;
    const llm = localLlm(config);
    for (const [name, request] of [
      ['text', TEXT],
      ['tool_call', TOOL_CALL],
    ] as const) {
      const cold = await measure(llm, { ...request, maxTokens: 8 }); // nothing of this prompt in the context yet
      const runs = [];
      // A new question each round behind the same system prompt, as in use: the system part stays cached.
      for (let i = 0; i < ROUNDS; i++) runs.push(await measure(llm, withQuestionNumber(request, i + 1)));
      // Generation speed after the first token; the prompt is evaluated before it (time to first token).
      const speeds = runs.map((r) => (r.outputTokens - 1) / ((r.totalMs - r.ttftMs) / 1000));
      results.push({
        threads,
        // What the runner gives the model: LLM_LOCAL_THREADS capped below the cores (platform/adapters/llm/llm-local.ts).
        threads_used: usableThreads(threads),
        kind: name,
        load_ms: Math.round(loadMs),
        prompt_tokens: runs[0]!.inputTokens,
        output_tokens: median(runs.map((r) => r.outputTokens)),
        ttft_first_call_ms: Math.round(cold.ttftMs),
        ttft_ms: Math.round(median(runs.map((r) => r.ttftMs))),
        tokens_per_second: Math.round(median(speeds) * 10) / 10,
      });
    }
  }
  return {
    model: localLlm(loadConfig()).name,
    rounds: ROUNDS,
    load_average: os.loadavg()[0],
    results,
    held_context: await heldContext(),
  };
}

/** One conversation sentence of the bench's agent, about 17 tokens. */
const SENTENCE = 'The clinic opens at nine in the morning and closes at six in the evening on weekdays. ';

/**
 * Time to first token and speed behind a conversation already read: the same long system part each round, a
 * new question of about 12 tokens after it, so the model reads only the question before it answers.
 */
async function heldContext() {
  const config = loadConfig({ ...process.env, LLM_LOCAL_THREADS: '1', LLM_CALL_TIMEOUT_MS: '600000' });
  const llm = localLlm(config);
  const rows: Record<string, number>[] = [];
  for (const held of [100, 300, 500, 800, 1100]) {
    const request: ChatRequest = {
      ...TEXT,
      messages: [
        { role: 'system', content: `You answer for a dental clinic. ${SENTENCE.repeat(Math.round(held / 17))}` },
        { role: 'user', content: 'When do you open?' },
      ],
      maxTokens: 24,
    };
    await measure(llm, request); // reads the conversation
    const runs = [];
    for (let i = 0; i < ROUNDS; i++) runs.push(await measure(llm, withQuestionNumber(request, i + 1)));
    rows.push({
      prompt_tokens: runs[0]!.inputTokens,
      ttft_ms: Math.round(median(runs.map((r) => r.ttftMs))),
      tokens_per_second: Math.round(median(runs.map((r) => (r.outputTokens - 1) / ((r.totalMs - r.ttftMs) / 1000))) * 10) / 10,
    });
  }
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  process.stdout.write(`${JSON.stringify(await benchLlmLocal(), null, 2)}\n`);
  process.exit(0);
}
