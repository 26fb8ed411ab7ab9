import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumFor } from '../support/browser';
import { createTestContext, type TestContext } from '../support/context';
import { type FakeWidgetEngine, startFakeWidgetEngine } from '../support/fake-widget-engine';
import { newTenant } from '../support/identity';
import { type WidgetSite, startWidgetSite, tonePcm16k, toneWav, widgetBrowserArgs, widgetPage } from '../support/widget-page';

// The widget as a visitor uses it, in headless Chromium: a site on its own origin embeds widget.js, the button
// opens the page in an iframe, the fake microphone plays a 440 Hz tone. A stand-in for the engine checks the
// session token and the socket's Origin, records the microphone frames and drives playback.

const executablePath = chromiumFor('Widget page test');
const MIC_HZ = 440;

/** Frequency of PCM16 audio at 16 kHz from its zero crossings (a wrong sample rate shifts it by the rate's ratio). */
function frequencyAt16k(pcm: Int16Array): number {
  let crossings = 0;
  for (let i = 1; i < pcm.length; i++) if (pcm[i - 1]! < 0 !== pcm[i]! < 0) crossings++;
  return crossings / 2 / (pcm.length / 16_000);
}

const rms = (pcm: Int16Array) => Math.sqrt(pcm.reduce((sum, s) => sum + s * s, 0) / Math.max(1, pcm.length)) / 32768;

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 5000): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now();
}

describe.skipIf(!executablePath)('the widget page in a browser', () => {
  let ctx: TestContext;
  let engine: FakeWidgetEngine;
  let site: WidgetSite;
  let browser: Browser;
  let session: string;
  beforeAll(async () => {
    engine = await startFakeWidgetEngine(() => ctx.config);
    ctx = await createTestContext({ env: { VOICE_PUBLIC_URL: engine.url } });
    site = await startWidgetSite(ctx.baseUrl);
    ({ session } = await newTenant(ctx));
    const wav = toneWav(path.join(os.tmpdir(), `widget-mic-${process.pid}.wav`), { frequency: MIC_HZ });
    browser = await chromium.launch({ executablePath, args: widgetBrowserArgs(wav) });
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await engine?.close();
    await ctx?.close();
  });

  async function publishedWidget(allowedOrigins = [site.origin]) {
    const call = (method: string, p: string, body?: unknown) => ctx.request(method, p, { token: session, body });
    const agent = (await call('POST', '/core/agents', { name: 'Front desk' })).body;
    await call('POST', `/core/agents/${agent.id}/versions`, { config: { instructions: 'Help visitors.' } });
    await call('POST', `/core/agents/${agent.id}/versions/1/publish`, {});
    const res = await call('POST', `/core/agents/${agent.id}/widgets`, {
      name: 'Site bubble',
      allowed_origins: allowedOrigins,
      config: { title: 'Acme help', greeting: 'Ask us anything.', button_label: 'Talk to Acme' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.id as string;
  }

  it('streams the microphone as 16 kHz PCM16 frames, plays a segment and reports it, stops on clear', { timeout: 90_000 }, async () => {
    const widgetId = await publishedWidget();
    const widget = await widgetPage(browser, site, widgetId);
    expect(await widget.frame.locator('#greeting').textContent()).toBe('Ask us anything.');
    expect(await widget.frame.locator('#start').textContent()).toBe('Talk to Acme');
    await widget.start();
    const call = await engine.nextSession();
    expect(call.origin).toBe(ctx.baseUrl);
    expect(call.claims).toMatchObject({ channel: 'widget', widget: widgetId });
    call.send({ type: 'ready', conversation_id: 'c1', sample_rate: 16000 });
    await until(async () => (await widget.state()) === 'live', 'live');

    // Microphone: 20 ms frames of PCM16 at 16 kHz, about 50 a second, carrying the tone at its own pitch.
    const frames = await call.waitForFrames(60);
    expect(frames.every((f) => f.bytes.length === 640)).toBe(true);
    const tail = frames.slice(10, 60);
    const pcm = new Int16Array(Buffer.concat(tail.map((f) => f.bytes)).buffer.slice(0));
    expect(rms(pcm)).toBeGreaterThan(0.01);
    expect(Math.abs(frequencyAt16k(pcm) - MIC_HZ)).toBeLessThan(30);
    const perSecond = ((tail.length - 1) * 1000) / (tail.at(-1)!.at - tail[0]!.at);
    expect(perSecond).toBeGreaterThan(30);
    expect(perSecond).toBeLessThan(80);

    // A segment of 600 ms plays in real time, then is reported played.
    const sentAt = Date.now();
    call.sendSegment('s1', tonePcm16k(600));
    await until(() => widget.playing(), 'playing');
    const played = await call.waitForMessage('played', 's1');
    expect(played.at - sentAt).toBeGreaterThanOrEqual(550);
    expect(played.at - sentAt).toBeLessThan(3000);

    // Barge-in: a 5 s segment is cut by clear; it is never reported; the next one plays right away.
    call.sendSegment('s2', tonePcm16k(5000));
    await until(() => widget.playing(), 'playing s2');
    const clearedAt = Date.now();
    call.send({ type: 'clear' });
    const silentAt = await until(async () => !(await widget.playing()), 'silent after clear', 1000);
    expect(silentAt - clearedAt).toBeLessThan(500);
    call.sendSegment('s3', tonePcm16k(300));
    await call.waitForMessage('played', 's3');
    expect(call.messages.some((m) => m.message.type === 'played' && m.message.id === 's2')).toBe(false);
    expect(Date.now() - clearedAt).toBeLessThan(3000);

    // Transcripts: a partial line is replaced by its final text.
    call.send({ type: 'transcript', role: 'caller', text: 'Where is my', final: false });
    call.send({ type: 'transcript', role: 'caller', text: 'Where is my order?', final: true });
    call.send({ type: 'transcript', role: 'agent', text: 'Let me look <b>that</b> up.', final: true });
    await until(async () => (await widget.transcript()).length === 2, 'two transcript lines');
    expect(await widget.transcript()).toEqual([
      { role: 'caller', text: 'Where is my order?' },
      { role: 'agent', text: 'Let me look <b>that</b> up.' },
    ]);

    await widget.hangUp();
    await call.waitForMessage('hangup');
    await call.waitForClose();
    expect(await widget.state()).toBe('ended');
    expect(engine.refused).toEqual([]);
    expect(widget.errors).toEqual([]);
  });

  it('shows nothing on a site the widget does not allow, and the browser refuses to frame its page there', {
    timeout: 60_000,
  }, async () => {
    const widgetId = await publishedWidget(['https://elsewhere.example']);
    const page = await browser.newPage();
    const refusals: string[] = [];
    page.on('console', (m) => refusals.push(m.text()));
    await page.goto(site.pageUrl(widgetId));
    await until(async () => refusals.some((text) => text.includes('widget.js: the widget is not available on this site')), 'the warning');
    expect(await page.locator('[data-voice-widget] button').count()).toBe(0);
    // Framed by hand, the page is refused by its frame-ancestors: nothing of it loads.
    await page.evaluate(
      (src) =>
        new Promise<void>((resolve) => {
          // Runs in the page: its document (the project's type checking has no DOM library).
          const { document } = globalThis as unknown as {
            document: { createElement(tag: string): any; body: { append(node: unknown): void } };
          };
          const frame = document.createElement('iframe');
          frame.addEventListener('load', () => resolve(), { once: true });
          frame.src = src;
          document.body.append(frame);
        }),
      `${ctx.baseUrl}/widgets/${widgetId}`,
    );
    const frame = page.frames().find((f) => f !== page.mainFrame())!;
    expect(await frame.$('#start')).toBeNull();
    expect(refusals.some((text) => text.includes('frame-ancestors'))).toBe(true);
    await page.close();
  });
});
