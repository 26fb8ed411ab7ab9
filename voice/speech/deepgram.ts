import WebSocket from 'ws';
import { pcmToMulaw } from '../audio/mulaw';
import { pcmToBytes } from '../audio/pcm';
import { openProviderSocket, wsBase } from './provider-socket';
import type { ListenEvent, ListenOptions, ListenSession, Recognizer } from './types';

// Deepgram's live transcription (WebSocket /v1/listen): the caller's audio as binary frames (μ-law at 8 kHz,
// linear16 otherwise), interim results as partials, finals joined until Deepgram's endpointing says the
// speech ended (`speech_final`) or `UtteranceEnd` comes, then speech_stopped, the transcript and the turn.

export interface DeepgramOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
  keywords: string[];
  connectTimeoutMs: number;
  firstResultMs: number;
}

/** Silence (ms) that makes Deepgram's endpointing call the speech final. */
const ENDPOINTING_MS = 300;
/** Deepgram's fallback end of an utterance when endpointing never fires (noise). */
const UTTERANCE_END_MS = 1000;
/** Deepgram closes a stream after ~10 s without audio: a KeepAlive before that. */
const KEEPALIVE_MS = 5_000;
const CLOSE_GRACE_MS = 2_000;

interface DeepgramResult {
  type: 'Results';
  start: number;
  duration: number;
  is_final?: boolean;
  speech_final?: boolean;
  channel?: { alternatives?: { transcript?: string; confidence?: number; words?: { start: number; end: number }[] }[] };
}

type DeepgramMessage =
  | DeepgramResult
  | { type: 'SpeechStarted'; timestamp: number }
  | { type: 'UtteranceEnd'; last_word_end: number }
  | { type: 'Metadata' }
  | { type: 'Error'; description?: string; message?: string };

function listenUrl(o: DeepgramOptions, sampleRate: number, language: string): string {
  const query = new URLSearchParams({
    model: o.model,
    language,
    encoding: sampleRate === 8000 ? 'mulaw' : 'linear16',
    sample_rate: String(sampleRate),
    channels: '1',
    interim_results: 'true',
    punctuate: 'true',
    smart_format: 'true',
    endpointing: String(ENDPOINTING_MS),
    utterance_end_ms: String(UTTERANCE_END_MS),
    vad_events: 'true',
  });
  for (const word of o.keywords.slice(0, 100)) query.append(o.model.startsWith('nova-3') ? 'keyterm' : 'keywords', word);
  return `${wsBase(o.baseUrl)}/v1/listen?${query}`;
}

class DeepgramSession implements ListenSession {
  readonly closed: Promise<void>;
  private written = 0;
  private lastWriteAt = performance.now();
  private finals: string[] = [];
  private speaking = false;
  private segmentStartMs = 0;
  private lastWordEndMs = 0;
  private resetAtMs = 0;
  private firstResult?: NodeJS.Timeout;
  private heard = false;
  private closing = false;
  private failed = false;
  private readonly keepAlive: NodeJS.Timeout;

  constructor(
    private readonly socket: WebSocket,
    private readonly sampleRate: number,
    private readonly options: DeepgramOptions,
    private readonly listen: ListenOptions,
  ) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('message', (data, binary) => {
      if (!binary) this.onMessage(String(data));
    });
    socket.on('error', (error) => this.fail(`deepgram: ${error.message}`));
    socket.on('close', (code, reason) => {
      clearInterval(this.keepAlive);
      clearTimeout(this.firstResult);
      if (!this.closing) this.fail(`deepgram closed the stream (${code}${reason.length ? ` ${reason}` : ''})`);
    });
    this.keepAlive = setInterval(() => {
      if (performance.now() - this.lastWriteAt > KEEPALIVE_MS - 1000) this.send(JSON.stringify({ type: 'KeepAlive' }));
    }, KEEPALIVE_MS);
  }

  private get writtenMs(): number {
    return (this.written * 1000) / this.sampleRate;
  }

  private send(data: string | Uint8Array): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(data);
  }

  private emit(event: ListenEvent): void {
    if (!this.failed) this.listen.onEvent(event);
  }

  private fail(reason: string): void {
    if (this.failed || this.closing) return;
    this.failed = true;
    this.shut();
    this.listen.onFailure?.(reason);
  }

  write(samples: Int16Array): void {
    if (this.failed || this.closing) return;
    this.send(this.sampleRate === 8000 ? pcmToMulaw(samples) : pcmToBytes(samples));
    this.written += samples.length;
    this.lastWriteAt = performance.now();
    // Bounded: a stream that takes audio and never answers is a failed provider.
    if (!this.heard && !this.firstResult)
      this.firstResult = setTimeout(
        () => this.fail(`deepgram sent no result within ${this.options.firstResultMs} ms`),
        this.options.firstResultMs,
      );
  }

  reset(): void {
    this.resetAtMs = this.writtenMs;
    this.finals = [];
    this.speaking = false;
  }

  close(): void {
    if (this.closing) return;
    this.send(JSON.stringify({ type: 'CloseStream' }));
    this.shut();
  }

  private shut(): void {
    this.closing = true;
    clearInterval(this.keepAlive);
    clearTimeout(this.firstResult);
    // Deepgram answers CloseStream with its last results and closes; past the grace the socket goes anyway.
    const timer = setTimeout(() => this.socket.terminate(), CLOSE_GRACE_MS);
    this.socket.once('close', () => clearTimeout(timer));
    if (this.failed) this.socket.terminate();
  }

  /** How long after its audio was written the speech ending at `ms` is known. */
  private lagMs(ms: number): number {
    return Math.max(0, Math.round(performance.now() - this.lastWriteAt + this.writtenMs - ms));
  }

  private onMessage(text: string): void {
    let message: DeepgramMessage;
    try {
      message = JSON.parse(text) as DeepgramMessage;
    } catch {
      return;
    }
    if (!this.heard) {
      this.heard = true;
      clearTimeout(this.firstResult);
    }
    switch (message.type) {
      case 'SpeechStarted':
        this.startSpeech(message.timestamp * 1000);
        return;
      case 'Results':
        this.onResult(message);
        return;
      case 'UtteranceEnd':
        if (this.finals.length) this.flush(true);
        else this.stopSpeech();
        return;
      case 'Error':
        this.fail(`deepgram: ${message.description ?? message.message ?? 'error'}`);
        return;
    }
  }

  private startSpeech(atMs: number): void {
    if (this.speaking || atMs < this.resetAtMs) return;
    this.speaking = true;
    this.segmentStartMs = Math.round(atMs);
    this.emit({ type: 'speech_started', at_ms: this.segmentStartMs });
  }

  private stopSpeech(): void {
    if (!this.speaking) return;
    this.speaking = false;
    this.emit({ type: 'speech_stopped', at_ms: Math.round(Math.max(this.lastWordEndMs, this.segmentStartMs)) });
  }

  private onResult(result: DeepgramResult): void {
    const endMs = (result.start + result.duration) * 1000;
    if (endMs <= this.resetAtMs) return;
    const best = result.channel?.alternatives?.[0];
    const text = (best?.transcript ?? '').trim();
    const words = best?.words ?? [];
    if (text) {
      this.startSpeech((words[0]?.start ?? result.start) * 1000);
      if (!result.is_final) {
        this.emit({ type: 'partial', text: [...this.finals, text].join(' '), at_ms: Math.round(endMs) });
        return;
      }
      this.finals.push(text);
      this.lastWordEndMs = (words.at(-1)?.end ?? result.start + result.duration) * 1000;
    }
    if (!result.is_final) return;
    if (result.speech_final && this.finals.length) this.flush(false);
    // Speech Deepgram heard that held no words (a cough, a noise) ends with its final result.
    else if (!this.finals.length) this.stopSpeech();
  }

  /** The caller's words so far, as one transcript, and Deepgram's word on the end of the turn. */
  private flush(utteranceEnd: boolean): void {
    const text = this.finals.join(' ');
    this.finals = [];
    this.speaking = true;
    this.stopSpeech();
    const endMs = Math.round(this.lastWordEndMs);
    this.emit({ type: 'transcript', text, start_ms: this.segmentStartMs, end_ms: endMs, stt_ms: this.lagMs(endMs) });
    // Endpointing is silence, not meaning: words that end without a full stop leave the turn open a little longer.
    const complete = utteranceEnd || /[.?!]["')\]]?$/.test(text);
    this.emit({ type: 'turn', complete, probability: null, turn_ms: 0 });
  }
}

export function deepgramRecognizer(options: DeepgramOptions): Recognizer {
  return {
    name: `deepgram:${options.model}`,
    async listen(listen) {
      const socket = await openProviderSocket(
        listenUrl(options, listen.sampleRate, listen.language),
        { Authorization: `Token ${options.apiKey}` },
        options.connectTimeoutMs,
        'deepgram',
      );
      return new DeepgramSession(socket, listen.sampleRate, options, listen);
    },
    async transcribe(samples, sampleRate, signal) {
      // Pre-recorded audio: one POST of the whole utterance.
      const started = performance.now();
      const query = new URLSearchParams({ model: options.model, encoding: 'linear16', sample_rate: String(sampleRate), punctuate: 'true' });
      const bound = AbortSignal.timeout(options.firstResultMs * 4);
      const response = await fetch(`${options.baseUrl.replace(/\/+$/, '')}/v1/listen?${query}`, {
        method: 'POST',
        headers: { Authorization: `Token ${options.apiKey}`, 'Content-Type': 'application/octet-stream' },
        body: pcmToBytes(samples),
        signal: signal ? AbortSignal.any([signal, bound]) : bound,
      });
      if (!response.ok) throw new Error(`deepgram answered ${response.status} to a transcription`);
      const body = (await response.json()) as { results?: { channels?: { alternatives?: { transcript?: string }[] }[] } };
      return { text: body.results?.channels?.[0]?.alternatives?.[0]?.transcript ?? '', stt_ms: Math.round(performance.now() - started) };
    },
  };
}
