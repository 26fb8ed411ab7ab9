// The speech side of the pipeline, one interface each, so a cloud provider can stand in for the local
// models: a recognizer (voice activity, transcripts and, where it can, end of turn), a voice, a turn model.

/** What a listening session reports, times in milliseconds of the audio written to it. */
export type ListenEvent =
  | { type: 'speech_started'; at_ms: number }
  | { type: 'partial'; text: string; at_ms: number }
  | { type: 'speech_stopped'; at_ms: number }
  | { type: 'transcript'; text: string; start_ms: number; end_ms: number; stt_ms: number }
  /** The end-of-turn judgement on the caller's audio, after speech stopped (recognizers that have a turn model). */
  | { type: 'turn'; complete: boolean; probability: number | null; turn_ms: number };

export interface ListenSession {
  /** Caller audio, PCM16 at the session's sample rate, in order. */
  write(samples: Int16Array): void;
  /**
   * Partial transcripts on or off (off when the session opens): the conversation wants them only while its
   * agent speaks, to hear a barge-in early. A recognizer whose partials cost nothing may ignore it.
   */
  partials?(on: boolean): void;
  /** Forget what is buffered (the caller's speech so far is dropped). */
  reset(): void;
  close(): void;
  readonly closed: Promise<void>;
}

export interface ListenOptions {
  sampleRate: number;
  language: string;
  onEvent: (event: ListenEvent) => void;
  /**
   * A cloud recognizer whose stream fails after it opened (closed on it, no result in time) says why here,
   * once, and writes nothing more; the conversation's fallback then listens locally (./fallback.ts).
   */
  onFailure?: (reason: string) => void;
}

export interface Recognizer {
  readonly name: string;
  listen(options: ListenOptions): Promise<ListenSession>;
  /** One utterance at once (replays, benchmarks). */
  transcribe(samples: Int16Array, sampleRate: number, signal?: AbortSignal): Promise<{ text: string; stt_ms: number }>;
}

export interface SpeakOptions {
  sampleRate: number;
  voice: string;
  speed: number;
  signal: AbortSignal;
}

export interface SpeechVoice {
  readonly name: string;
  /** Audio of the text, PCM16 mono at the asked rate, yielded as it is synthesized. */
  speak(text: string, options: SpeakOptions): AsyncIterable<Int16Array>;
}

export interface TurnVerdict {
  complete: boolean;
  probability: number | null;
  turn_ms: number;
}

export interface TurnModel {
  readonly name: string;
  judge(samples: Int16Array, sampleRate: number, signal?: AbortSignal): Promise<TurnVerdict>;
}

export interface SpeechStack {
  recognizer: Recognizer;
  voice: SpeechVoice;
  turn: TurnModel;
}
