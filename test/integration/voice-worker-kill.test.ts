import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { startChildWorker, startInProcessWorker, stopInProcessWorker, type InProcessWorker } from '../support/durability-workers';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { newTenant, type Tenant } from '../support/identity';
import { finishedConversation, speechServer, startTestEngine, type TestEngine } from '../support/voice/engine';
import { SimulatedCaller } from '../support/voice/simulated-caller';

// The Temporal worker dies with SIGKILL in the middle of a call: the engine keeps talking, every turn spoken
// before and after the kill is in the conversation, and the summary and outcome are written once a worker is back.

const { url: speechUrl, describe: needsSpeech } = speechServer();

let ctx: TestContext;
let llm: FakeChatLlm;
let engine: TestEngine;
let t: Tenant;
let env: Record<string, string>;
let child: ChildProcess | undefined;
let replacement: InProcessWorker | undefined;

const call = (method: string, path: string, body?: unknown) => ctx.request(method, path, { token: t.session, body });
const words = (text: string | undefined) => (text ?? '').toLowerCase().replace(/[^a-z0-9 ]/g, ' ');

type Turn = { seq: number; role: string; text: string };

needsSpeech('voice engine while the worker is killed', () => {
  beforeAll(async () => {
    llm = await startFakeChatLlm();
    env = { LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'fake-chat' };
    // No worker in this process: the conversation's workflow runs on the child until it is killed.
    ctx = await createTestContext({ env });
    t = await newTenant(ctx);
    child = await startChildWorker(ctx, env);
    engine = await startTestEngine(ctx, speechUrl);
  }, 180_000);

  afterAll(async () => {
    child?.kill('SIGKILL');
    await engine?.close();
    await stopInProcessWorker(replacement);
    await ctx?.close();
    await llm?.close();
  });

  it('a worker killed mid-call loses no turn already spoken, and the summary is written once a worker is back', async () => {
    llm.script = [
      { text: 'We are open from nine to five on weekdays.' },
      { text: 'Yes, we deliver to your street on Saturdays.' },
      { text: 'The delivery costs five dollars.' },
    ];
    const agent = (await call('POST', '/core/agents', { name: 'Front desk' })).body;
    await call('POST', `/core/agents/${agent.id}/versions`, {
      config: {
        instructions: 'You are the front desk of Acme Parts.',
        first_message: 'Hello, this is Acme Parts. How can I help you today?',
        recording: { enabled: false },
      },
    });
    expect((await call('POST', `/core/agents/${agent.id}/versions/1/publish`, {})).status).toBe(200);
    await call('GET', '/core/agents');
    const [org] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM organizations WHERE external_id = ${t.org}`;
    const token = await engine.token({ org: org!.id, agent: agent.id, channel: 'twilio' });
    const caller = await SimulatedCaller.connect({ url: engine.url, token, speechBaseUrl: speechUrl });

    const turnsNow = async (): Promise<Turn[]> => {
      const list = await call('GET', `/core/agents/${agent.id}/conversations`);
      const id = list.body.data?.[0]?.id as string | undefined;
      if (!id) return [];
      const res = await call('GET', `/core/agents/${agent.id}/conversations/${id}`);
      return (res.body.turns ?? []) as Turn[];
    };
    const turnsReach = (count: number, what: string) =>
      waitFor(
        async () => {
          const turns = await turnsNow();
          return turns.length >= count ? turns : undefined;
        },
        15_000,
        what,
      );

    await caller.waitForSpeech({ timeoutMs: 30_000, transcribe: false });
    await caller.say('What are your opening hours?');
    await caller.waitForSpeech({ timeoutMs: 30_000, transcribe: false });
    await caller.say('Do you deliver on Saturdays?');
    await caller.waitForSpeech({ timeoutMs: 30_000, transcribe: false });
    const beforeKill = await turnsReach(5, 'five turns before the kill');

    // The worker goes without a chance to finish anything.
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child!.kill('SIGKILL');
    await exited;
    child = undefined;

    await caller.say('How much does the delivery cost?');
    const afterKill = await caller.waitForSpeech({ timeoutMs: 30_000, transcribe: true });
    expect(words(afterKill.text)).toMatch(/five|dollar|deliver|cost/);
    // Written while no worker runs: the engine writes turns itself.
    const whileDown = await turnsReach(7, 'the turns spoken while no worker runs');
    expect(whileDown.slice(0, beforeKill.length)).toEqual(beforeKill);

    replacement = await startInProcessWorker(ctx);
    await caller.hangUp();
    const ended = await finishedConversation(ctx, t.session, agent.id);

    const turns = ended.turns as Turn[];
    expect(turns.map((turn) => turn.role)).toEqual(['agent', 'caller', 'agent', 'caller', 'agent', 'caller', 'agent']);
    expect(turns.map((turn) => turn.seq)).toEqual([...turns.map((turn) => turn.seq)].sort((a, b) => a - b));
    const [greeting, q1, a1, q2, a2, q3, a3] = turns.map((turn) => words(turn.text));
    expect(greeting).toMatch(/acme/);
    expect(q1).toMatch(/open|hour/);
    expect(a1).toMatch(/nine to five/);
    expect(q2).toMatch(/deliver|saturday/);
    expect(a2).toMatch(/saturdays/);
    expect(q3).toMatch(/deliver|cost|much/);
    expect(a3).toMatch(/five dollars/);
    expect(ended.status).toBe('completed');
    expect(ended.end_reason).toBe('caller_hung_up');
    // Written by the worker that came back, from every turn.
    expect(ended.summary).toContain('and 2 more times');
    expect(ended.outcome).toMatchObject({ disposition: 'answered', caller_turns: 3, agent_turns: 4 });
  }, 180_000);
});
