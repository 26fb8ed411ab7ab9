import { describe, expect, it } from 'vitest';
import {
  answerFromRecording,
  exchangesOf,
  normalizedText,
  recordedToolResults,
  textChanged,
  type RecordedTurn,
} from '../../domain/voice-replay';
import { wavFile } from '../../voice/audio/pcm';
import { callerTrack, sliceTurn } from '../../voice/replay/caller-audio';

const turn = (seq: number, role: RecordedTurn['role'], text: string, audit: Record<string, unknown> = {}): RecordedTurn => ({
  seq,
  role,
  text,
  started_ms: null,
  ended_ms: null,
  audit,
});

const recorded = [
  turn(0, 'agent', 'Hello, how can I help?'),
  turn(1, 'caller', 'Book me Tuesday.'),
  turn(3, 'tool', '{"status":"booked"}', { tool: 'book', input: { day: 'Tuesday', time: 10 }, ok: true }),
  turn(2, 'agent', 'Let me book that.'),
  turn(4, 'agent', 'Booked.'),
  turn(5, 'caller', 'Thanks.'),
];

describe('replay rules', () => {
  it('cuts a conversation into exchanges in sequence order, the opening with no caller', () => {
    const exchanges = exchangesOf(recorded);
    expect(exchanges.map((e) => [e.caller?.seq ?? null, e.agentText])).toEqual([
      [null, 'Hello, how can I help?'],
      [1, 'Let me book that. Booked.'],
      [5, ''],
    ]);
    expect(exchanges[1]!.tools).toEqual([{ name: 'book', input: { day: 'Tuesday', time: 10 }, ok: true, content: '{"status":"booked"}' }]);
  });

  it('compares text without case, punctuation or spacing', () => {
    expect(normalizedText('  We open at NINE!  ')).toBe('we open at nine');
    expect(textChanged('We open at nine.', 'we open, at nine')).toBe(false);
    expect(textChanged('We open at nine.', 'We open at ten.')).toBe(true);
    expect(textChanged('', null)).toBe(false);
  });

  it('answers a tool call from the recorded result with the same name and arguments, whatever their key order', () => {
    const results = recordedToolResults(recorded);
    const used = new Map<string, number>();
    expect(answerFromRecording(results, used, 'book', { time: 10, day: 'Tuesday' })).toEqual({
      ok: true,
      content: '{"status":"booked"}',
      source: 'recorded',
    });
    expect(answerFromRecording(results, used, 'book', { day: 'Friday', time: 10 })).toMatchObject({ ok: false, source: 'unavailable' });
    expect(answerFromRecording(results, used, 'other', { day: 'Tuesday', time: 10 }).content).toMatch(/unavailable in replay/);
  });
});

describe('caller audio of a recording', () => {
  it("reads the caller channel of a dual-channel WAV and slices a turn's span with a margin; a mono WAV has none", () => {
    const caller = Int16Array.from({ length: 8000 }, (_, i) => i % 100);
    const agent = new Int16Array(8000).fill(-5);
    const track = callerTrack(wavFile([caller, agent], 8000))!;
    expect(track.sampleRate).toBe(8000);
    expect(track.samples).toEqual(caller);
    // 300..500 ms with 200 ms before and 300 ms after: 100..800 ms.
    expect(sliceTurn(track, 300, 500)!.length).toBe(5600);
    expect(sliceTurn(track, null, 500)).toBeNull();
    expect(callerTrack(wavFile([caller], 8000))).toBeNull();
    expect(callerTrack(Buffer.from('not a wav'))).toBeNull();
  });
});
