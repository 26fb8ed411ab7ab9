import { describe, expect, it } from 'vitest';
import type { ChatEvent, ChatModel, ChatRequest } from '../../platform/adapters/llm/chat-model';
import type { SpeechVoice } from '../../voice/speech/types';
import { AgentTurn } from '../../voice/pipeline/agent-turn';

// One agent turn over a model that streams a written answer token by token and a voice that makes 10 ms
// of audio per character: what the caller hears, in which pieces, and when the model is stopped.

function scriptedModel(answer: string) {
  const seen: { aborted: boolean; tokensSent: number } = { aborted: false, tokensSent: 0 };
  const model: ChatModel = {
    name: 'scripted',
    async *stream(request: ChatRequest): AsyncIterable<ChatEvent> {
      try {
        for (const token of answer.match(/\S+\s*/g) ?? []) {
          request.signal.throwIfAborted();
          seen.tokensSent++;
          yield { type: 'text-delta', delta: token };
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
        yield { type: 'finish', reason: 'stop' };
      } finally {
        // Stopped by its signal, as a real model's generation is (a consumer may also just stop reading).
        seen.aborted = request.signal.aborted;
      }
    },
  };
  return { model, seen };
}

const voice: SpeechVoice = {
  name: 'silence',
  async *speak(text, { sampleRate }) {
    yield new Int16Array((sampleRate / 100) * text.length);
  },
};

async function runTurn(answer: string, speech: SpeechVoice = voice) {
  const { model, seen } = scriptedModel(answer);
  const pieces: string[] = [];
  const turn = new AgentTurn(
    {
      model,
      voice: speech,
      tools: [],
      messages: [{ role: 'user', content: 'hi' }],
      sampleRate: 8000,
      voiceId: 'default',
      speed: 1,
      maxTokens: 100,
      temperature: 0,
      signal: new AbortController().signal,
    },
    {
      audio: () => {},
      sentenceDone: (sentence) => pieces.push(sentence.text),
      runTool: async () => '',
    },
  );
  await turn.run();
  return { pieces, turn, seen };
}

describe('an agent turn', () => {
  it('speaks its first words in clauses, then whole sentences', async () => {
    const { pieces, turn } = await runTurn('Yes, we open at nine, every weekday. Parking is free.');
    expect(pieces).toEqual(['Yes,', 'we open at nine,', 'every weekday.', 'Parking is free.']);
    expect(turn.added).toEqual([{ role: 'assistant', content: 'Yes, we open at nine, every weekday. Parking is free.' }]);
    expect(turn.timings.llm_first_clause_ms).toBeGreaterThanOrEqual(turn.timings.llm_first_token_ms!);
  });

  it('stops a model that says a sentence of the turn again, and keeps only what was said', async () => {
    const { pieces, turn, seen } = await runTurn("I'm sorry. I can't help with that. I'm sorry. I can't help with that. I'm sorry.");
    expect(pieces).toEqual(["I'm sorry.", "I can't help with that."]);
    expect(seen.aborted).toBe(true);
    expect(seen.tokensSent).toBeLessThan(15);
    expect(turn.added).toEqual([{ role: 'assistant', content: "I'm sorry. I can't help with that." }]);
  });

  it("makes one sentence's speech at a time, in order, so the first is never slowed by the next", async () => {
    let making = 0;
    let most = 0;
    const started: string[] = [];
    const slow: SpeechVoice = {
      name: 'slow',
      async *speak(text, { sampleRate }) {
        started.push(text);
        most = Math.max(most, ++making);
        try {
          for (let i = 0; i < 3; i++) {
            await new Promise((resolve) => setTimeout(resolve, 5));
            yield new Int16Array(sampleRate / 100);
          }
        } finally {
          making--;
        }
      },
    };
    const { pieces } = await runTurn('Yes, we open at nine, every weekday. Parking is free.', slow);
    expect(pieces).toEqual(['Yes,', 'we open at nine,', 'every weekday.', 'Parking is free.']);
    expect(started).toEqual(pieces);
    expect(most).toBe(1);
  });
});
