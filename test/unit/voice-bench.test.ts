import { describe, expect, it } from 'vitest';
import { type CallRecord, VoiceScript, loadVoiceScript, percentile, stageTimings, voiceReport } from '../../bench/voice';

// The voice bench's script and arithmetic (bench/voice.ts): the figures it prints are only as good as these.

describe('voice bench', () => {
  it('has a script of at least 50 caller turns of every kind, each backchannel or interruption after a turn it can be said over', () => {
    const script = loadVoiceScript();
    expect(script.turns.length).toBeGreaterThanOrEqual(50);
    const kinds = new Set(script.turns.map((t) => t.kind));
    expect([...kinds].sort()).toEqual(['backchannel', 'interruption', 'question', 'spelled', 'statement', 'yes_no']);
    const spelled = script.turns.filter((t) => t.kind === 'spelled');
    expect(spelled.some((t) => t.parts.join(' ').includes(' at '))).toBe(true); // an e-mail
    expect(spelled.some((t) => /(one|two|five|zero)/.test(t.parts.join(' ')))).toBe(true); // a number
    const bad = { description: '', greeting: false, turns: [{ kind: 'backchannel', say: 'uh-huh', during_reply_ms: 500 }] };
    expect(VoiceScript.safeParse(bad).success).toBe(false);
  });

  it('reads stage timings tolerantly: missing or non-numeric stages are null', () => {
    const none = {
      eot_ms: null,
      stt_ms: null,
      llm_first_token_ms: null,
      llm_first_clause_ms: null,
      tts_first_audio_ms: null,
      engine_ms: null,
    };
    expect(stageTimings(undefined)).toEqual(none);
    expect(stageTimings({ eot_ms: 210, stt_ms: '5', llm_first_token_ms: 380.5, tts_first_audio_ms: null, first_audio_ms: 700 })).toEqual({
      ...none,
      eot_ms: 210,
      llm_first_token_ms: 380.5,
    });
  });

  it("counts as the engine's own time what its first audio took beyond the model's first piece and its synthesis", () => {
    const timings = { llm_first_token_ms: 200, llm_first_clause_ms: 320, tts_first_audio_ms: 150, first_audio_ms: 490 };
    expect(stageTimings(timings)).toMatchObject({ llm_first_clause_ms: 320, engine_ms: 20 });
    expect(stageTimings({ ...timings, first_audio_ms: null }).engine_ms).toBeNull();
  });

  it('counts each turn-taking error over the turns it applies to, and leaves spoken-over turns out of the latency', () => {
    expect(percentile([], 50)).toBeNull();
    expect(percentile([300, 100, 200, 400], 50)).toBe(200);
    expect(percentile([300, 100, 200, 400], 95)).toBe(400);
    const call: CallRecord = {
      call: 0,
      greetingMs: 400,
      closedBy: 'caller',
      protocolErrors: [],
      stageTimings: [
        { eot_ms: 200, stt_ms: 50, llm_first_token_ms: 300, tts_first_audio_ms: 90 },
        { eot_ms: 300, stt_ms: null, llm_first_token_ms: 500, tts_first_audio_ms: 110 },
      ],
      turns: [
        { kind: 'question', text: 'q', latencyMs: 800 },
        { kind: 'backchannel', text: 'uh-huh', latencyMs: null, duringAgentSpeech: true, backchannelInterrupted: true },
        { kind: 'backchannel', text: 'right', latencyMs: null, duringAgentSpeech: false },
        { kind: 'spelled', text: 'four … one', latencyMs: null, overlapped: true, spellingCut: true },
        { kind: 'yes_no', text: 'yes', latencyMs: 3500, yesNoDropped: true },
        { kind: 'yes_no', text: 'no', latencyMs: 600, yesNoDropped: false },
        { kind: 'interruption', text: 'wait', latencyMs: 900, duringAgentSpeech: true, interruptionHonoured: true, bargeInMs: 350 },
      ],
    };
    const report = voiceReport([call]);
    expect(report.latency_ms).toMatchObject({ n: 4, p50: 800, p95: 3500 });
    expect(report.turn_taking_errors).toMatchObject({
      backchannel_interrupted: { count: 1, of: 1, rate: 1 },
      spelling_cut: { count: 1, of: 1 },
      yes_no_dropped: { count: 1, of: 2, rate: 0.5 },
      interruption_ignored: { count: 0, of: 1 },
    });
    expect(report.said_after_the_reply_ended).toBe(1);
    expect(report.barge_in_ms).toEqual({ n: 1, p50: 350, p95: 350 });
    expect(report.stages_ms).toMatchObject({
      agent_turns: 2,
      eot_ms: { n: 2, p50: 200, p95: 300, missing: 0 },
      stt_ms: { n: 1, missing: 1 },
    });
    expect(voiceReport([{ ...call, stageTimings: [] }]).stages_ms).toMatch(/no audit rows/);
  });
});
