import { describe, expect, it } from 'vitest';
import type { AgentTurnHooks } from '../../voice/pipeline/agent-turn';
import { HeldHooks } from '../../voice/pipeline/held-hooks';

// An answer made ahead: nothing of it reaches the caller, and no tool runs, until its turn is taken.

const liveHooks = () => {
  const seen: string[] = [];
  const live: AgentTurnHooks = {
    audio: (samples, index) => seen.push(`audio ${index} ${samples.length}`),
    sentenceDone: (sentence, index) => seen.push(`done ${index} ${sentence.text}`),
    runTool: async (run) => {
      seen.push(`tool ${run.call.name}`);
      return 'ok';
    },
  };
  return { live, seen };
};
const call = { call: { id: 'c1', name: 'lookup', input: {} }, tool: undefined };

describe('the hooks of an answer made ahead', () => {
  it('hold audio, sentence ends and tool calls until released, then pass them in order and the rest at once', async () => {
    const { live, seen } = liveHooks();
    const held = new HeldHooks(live);
    held.hooks.audio(new Int16Array(160), 0, 'Yes.');
    held.hooks.sentenceDone({ text: 'Yes.', durationMs: 20 }, 0);
    const tool = held.hooks.runTool(call);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen).toEqual([]);
    held.release();
    expect(seen).toEqual(['audio 0 160', 'done 0 Yes.']);
    await expect(tool).resolves.toBe('ok');
    held.hooks.audio(new Int16Array(80), 1, 'More.');
    expect(seen).toEqual(['audio 0 160', 'done 0 Yes.', 'tool lookup', 'audio 1 80']);
  });

  it('drop what they hold and fail a waiting tool call, which never runs', async () => {
    const { live, seen } = liveHooks();
    const held = new HeldHooks(live);
    held.hooks.audio(new Int16Array(160), 0, 'Yes.');
    const tool = held.hooks.runTool(call);
    held.drop();
    await expect(tool).rejects.toThrow(/went on/);
    expect(seen).toEqual([]);
  });
});
