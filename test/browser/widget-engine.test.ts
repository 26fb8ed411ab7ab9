import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev-servers/ports';
import { chromiumFor } from '../support/browser';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { newTenant, type Tenant } from '../support/identity';
import { finishedConversation, speechServer, startTestEngine, type TestEngine } from '../support/voice/engine';
import { publishedFrontDeskWidget, type WidgetSite, startWidgetSite, widgetBrowserArgs, widgetPage } from '../support/widget-page';

// The widget against the real conversation engine, in headless Chromium: the fake microphone plays a sentence
// the speech server synthesized, the page hears the agent's first message (its audio reaches the page's
// playback and its text the transcript) and is heard (the engine's caller turn has the sentence's words).

const executablePath = chromiumFor('Widget page with the engine');
const { url: speechUrl, describe: needsSpeech } = speechServer();

const SENTENCE = 'What are your opening hours on Saturday?';
const MIC_RATE = 16_000;
/** Silence before the sentence: the agent's greeting is over before the caller speaks (Chromium loops the file). */
const LEAD_SILENCE_S = 6;
const TAIL_SILENCE_S = 20;

/** The sentence in the speech server's voice, as a mono PCM16 WAV at 16 kHz between stretches of silence. */
async function sentenceWav(file: string): Promise<string> {
  const res = await fetch(new URL('/v1/speak', speechUrl), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ text: SENTENCE, sample_rate: MIC_RATE }),
    signal: AbortSignal.timeout(60_000),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain(`rate=${MIC_RATE}`);
  const speech = Buffer.from(await res.arrayBuffer());
  const data = Buffer.concat([Buffer.alloc(LEAD_SILENCE_S * MIC_RATE * 2), speech, Buffer.alloc(TAIL_SILENCE_S * MIC_RATE * 2)]);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(MIC_RATE, 24);
  header.writeUInt32LE(MIC_RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  fs.writeFileSync(file, Buffer.concat([header, data]));
  return file;
}

/**
 * Runs in every frame before its scripts: keeps what the page asked of the microphone and what it got, and
 * counts the agent's samples the page hands its playback (read before the transfer empties the array).
 */
function observeAudio() {
  const w = globalThis as unknown as Record<string, any>;
  const seen = { constraints: null as unknown, settings: null as unknown, samplesToPlayback: 0 };
  w.__widgetAudio = seen;
  const media = w.navigator?.mediaDevices;
  if (media?.getUserMedia) {
    const original = media.getUserMedia.bind(media);
    media.getUserMedia = async (constraints: unknown) => {
      seen.constraints = constraints;
      const stream = await original(constraints);
      seen.settings = stream.getAudioTracks()[0]?.getSettings() ?? null;
      return stream;
    };
  }
  const post = w.MessagePort.prototype.postMessage;
  w.MessagePort.prototype.postMessage = function (this: unknown, message: any, ...rest: unknown[]) {
    if (message && message.type === 'audio' && message.samples) seen.samplesToPlayback += message.samples.length;
    return post.call(this, message, ...rest);
  };
}

const words = (text: string | undefined) => (text ?? '').toLowerCase().replace(/[^a-z0-9 ]/g, ' ');

(executablePath ? needsSpeech : describe.skip)('the widget page with the real engine', () => {
  let ctx: TestContext;
  let llm: FakeChatLlm;
  let engine: TestEngine;
  let site: WidgetSite;
  let browser: Browser;
  let t: Tenant;
  let wav: string;

  beforeAll(async () => {
    llm = await startFakeChatLlm();
    // The engine's port is picked first: the API tells the page VOICE_PUBLIC_URL in the session's answer.
    const port = await freePort();
    ctx = await createTestContext({
      worker: true,
      env: { VOICE_PUBLIC_URL: `ws://127.0.0.1:${port}`, LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'fake-chat' },
    });
    engine = await startTestEngine(ctx, speechUrl, { port });
    site = await startWidgetSite(ctx.baseUrl);
    t = await newTenant(ctx);
    wav = await sentenceWav(path.join(os.tmpdir(), `widget-engine-mic-${process.pid}.wav`));
    browser = await chromium.launch({ executablePath, args: widgetBrowserArgs(wav) });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await engine?.close();
    await ctx?.close();
    await llm?.close();
    if (wav) fs.rmSync(wav, { force: true });
  });

  it('hears the first message as audio and text, and is heard: the caller turn has the microphone sentence', {
    timeout: 120_000,
  }, async () => {
    llm.script = [{ text: 'On Saturdays we are open from ten to two.' }];
    const { agentId, widgetId } = await publishedFrontDeskWidget(ctx, t.session, site.origin);
    const widget = await widgetPage(browser, site, widgetId, { initScript: observeAudio });
    await widget.start();
    await waitFor(async () => ((await widget.state()) === 'live' ? true : undefined), 20_000, 'the page live');
    const audio = () =>
      widget.frame.evaluate(
        () => (globalThis as unknown as { __widgetAudio: { constraints: any; settings: any; samplesToPlayback: number } }).__widgetAudio,
      );
    // The page asks for echo cancellation, and the browser's microphone track has it on.
    const mic = await audio();
    expect(mic.constraints.audio).toMatchObject({ echoCancellation: true });
    expect(mic.settings).toMatchObject({ echoCancellation: true });

    // Heard at the page: the greeting's audio went to the playback and its text into the transcript (the engine
    // sends the text once the page reported the audio played).
    const greeting = await waitFor(
      async () => (await widget.transcript()).find((line) => line.role === 'agent'),
      30_000,
      'the greeting in the transcript',
    );
    expect(words(greeting.text)).toMatch(/acme/);
    expect((await audio()).samplesToPlayback).toBeGreaterThan(16_000 * 0.5);

    // Heard by the engine: the microphone sentence is the caller's turn, and the answer comes back to the page.
    const said = await waitFor(
      async () => (await widget.transcript()).find((line) => line.role === 'caller'),
      40_000,
      "the caller's turn in the transcript",
    );
    expect(words(said.text)).toMatch(/open|hour|saturday/);
    await waitFor(
      async () => ((await widget.transcript()).filter((line) => line.role === 'agent').length >= 2 ? true : undefined),
      30_000,
      'the answer in the transcript',
    );

    await widget.hangUp();
    const ended = await finishedConversation(ctx, t.session, agentId);
    expect(ended.channel).toBe('widget');
    const turns = ended.turns as { role: string; text: string }[];
    expect(turns[0]).toMatchObject({ role: 'agent', text: 'Hello, Acme Parts here.' });
    const caller = turns.find((turn) => turn.role === 'caller');
    expect(caller, JSON.stringify(turns)).toBeDefined();
    const heard = words(caller!.text);
    expect(['opening', 'hours', 'saturday'].filter((w) => heard.includes(w)).length, heard).toBeGreaterThanOrEqual(2);
    expect(turns.some((turn) => turn.role === 'agent' && turn.text.includes('ten to two'))).toBe(true);
    expect(widget.errors).toEqual([]);
  });
});
