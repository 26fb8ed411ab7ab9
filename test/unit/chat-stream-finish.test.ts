import { describe, expect, it } from 'vitest';
import { closingFrames, LENGTH_CUT_FRAME, partsFromFrames, type UiFrame } from '../../domain/ui-message-stream';
import { type ChatEvent, TOOL_CALL_AS_TEXT_ANSWER, withoutToolCallText } from '../../platform/adapters/llm/chat-model';
import { relayModelStream, type StreamedStep } from '../../services/ui-stream/steps';

// What a model step's end puts in the stream: a tool call written as text is never the answer of a
// step without tools, and a step cut at the token limit finishes the answer with `length`.

async function* events(...list: ChatEvent[]): AsyncIterable<ChatEvent> {
  for (const e of list) yield e;
}
const deltas = (...pieces: string[]): ChatEvent[] => pieces.map((delta) => ({ type: 'text-delta', delta }));
const finish: ChatEvent = { type: 'finish', reason: 'stop' };

async function text(source: AsyncIterable<ChatEvent>): Promise<{ text: string; events: ChatEvent[] }> {
  const out: ChatEvent[] = [];
  for await (const e of withoutToolCallText(source)) out.push(e);
  return { text: out.map((e) => (e.type === 'text-delta' ? e.delta : '')).join(''), events: out };
}

describe('withoutToolCallText', () => {
  it('drops a tool call written as text, streamed in pieces, and answers a plain sentence instead', async () => {
    const call = '{"type":"tool_call","name":"search_accounts","input":{"query":"Acme"}}';
    const { text: answer, events: out } = await text(events(...deltas(' ', call.slice(0, 9), call.slice(9, 30), call.slice(30)), finish));
    expect(answer).toBe(TOOL_CALL_AS_TEXT_ANSWER);
    expect(answer).not.toContain('{');
    expect(out.at(-1)).toEqual(finish);
  });

  it('drops the other shapes of a call too (a fenced OpenAI-style call, several calls), keeping the prose after them', async () => {
    const fenced = '```json\n{"name": "list_deals", "arguments": {"stage": "won"}}\n```\nThese are the won deals.';
    expect((await text(events(...deltas(fenced.slice(0, 5), fenced.slice(5)), finish))).text).toBe('These are the won deals.');
    const two = '{"type":"tool_call","name":"a","input":{}}\n{"type":"tool_call","name":"b","input":{"x":"}"}}';
    expect((await text(events(...deltas(two), finish))).text).toBe(TOOL_CALL_AS_TEXT_ANSWER);
    // Cut off before the object closed (the token limit): still no JSON for the user.
    const cut = await text(events(...deltas('{"type":"tool_call","name":"search_acc'), { type: 'finish', reason: 'length' }));
    expect(cut.text).toBe(TOOL_CALL_AS_TEXT_ANSWER);
    expect(cut.events.at(-1)).toEqual({ type: 'finish', reason: 'length' });
  });

  it('gives the text of a {"type":"text"} reply, and leaves plain text and other JSON as written, streamed as it comes', async () => {
    expect((await text(events(...deltas('{"type":"text",', '"text":"Acme is \\"big\\"."}'), finish))).text).toBe('Acme is "big".');
    expect((await text(events(...deltas('{"type":"text","text":"Acme is bi'), finish))).text).toBe('Acme is bi');
    expect((await text(events(...deltas('{"total": 3}'), finish))).text).toBe('{"total": 3}');
    const plain = await text(events(...deltas('Acme ', 'has ', '{3} deals.'), finish));
    expect(plain.events).toEqual([...deltas('Acme ', 'has ', '{3} deals.'), finish]);
  });
});

describe('a step cut at the token limit', () => {
  const writer = () => {
    const frames: (UiFrame | null)[] = [];
    return { frames, push: (...f: (UiFrame | null)[]) => frames.push(...f) };
  };
  const ids = { textId: 't-0', callId: (n: number) => `c-${n}` };

  it('says so in the stream, and the answer finishes with length; a step that stopped finishes with stop', async () => {
    const cut = writer();
    const step: StreamedStep = { text: '', toolCalls: [], finishReason: 'stop' };
    await relayModelStream(events(...deltas('Once upon a'), { type: 'finish', reason: 'length' }), cut, ids, step, () => {});
    expect(step).toEqual({ text: 'Once upon a', toolCalls: [], finishReason: 'length' });
    expect(cut.frames).toEqual([
      { type: 'text-start', id: 't-0' },
      { type: 'text-delta', id: 't-0', delta: 'Once upon a' },
      LENGTH_CUT_FRAME,
    ]);
    const segment = [{ type: 'start' }, { type: 'start-step' }, ...cut.frames, { type: 'text-end', id: 't-0' }] as UiFrame[];
    expect(closingFrames(segment, 'stop')).toEqual([{ type: 'finish-step' }, { type: 'finish', finishReason: 'length' }, null]);
    // An error or a stop says what it is.
    expect(closingFrames(segment, 'error').at(-2)).toEqual({ type: 'finish', finishReason: 'error' });
    // The frame is no part of the message.
    expect(partsFromFrames(segment)).toEqual([{ type: 'step-start' }, { type: 'text', text: 'Once upon a', state: 'done' }]);

    const done = writer();
    await relayModelStream(events(...deltas('The end.'), finish), done, ids, { text: '', toolCalls: [], finishReason: 'stop' }, () => {});
    expect(done.frames).not.toContainEqual(LENGTH_CUT_FRAME);
    // A cut in an earlier step does not make a later step's end a cut.
    const later = [...segment, { type: 'finish-step' }, { type: 'start-step' }, ...done.frames] as UiFrame[];
    expect(closingFrames(later, 'stop').at(-2)).toEqual({ type: 'finish', finishReason: 'stop' });
  });
});
