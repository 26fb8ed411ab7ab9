import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Frame, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { TestContext } from './context';

// A widget as a visitor meets it: a customer's site (its own origin) embedding widget.js, the floating button,
// the widget's page in its iframe, and Chromium's fake microphone playing a WAV file. Shared by the widget's
// browser tests (test/browser/widget-page.test.ts) and the end-to-end ones against the real engine.

/** A mono PCM16 WAV of a tone, for Chromium's fake microphone (--use-file-for-fake-audio-capture), which loops it. */
export function toneWav(file: string, { frequency = 440, seconds = 2, sampleRate = 48_000, amplitude = 0.4 } = {}): string {
  const samples = Math.round(seconds * sampleRate);
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++)
    wav.writeInt16LE(Math.round(amplitude * 32767 * Math.sin((2 * Math.PI * frequency * i) / sampleRate)), 44 + i * 2);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, wav);
  return file;
}

/** PCM16 samples of a tone at 16 kHz: agent audio for a segment. */
export function tonePcm16k(ms: number, frequency = 330, amplitude = 0.3): Int16Array {
  const pcm = new Int16Array((16_000 * ms) / 1000);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(amplitude * 32767 * Math.sin((2 * Math.PI * frequency * i) / 16_000));
  return pcm;
}

/** Chromium's flags for a widget test: a fake microphone playing `wav`, granted without a prompt; audio may start on its own. */
export function widgetBrowserArgs(wav: string): string[] {
  return [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream',
    `--use-file-for-fake-audio-capture=${wav}`,
    '--autoplay-policy=no-user-gesture-required',
  ];
}

export interface WidgetSite {
  /** The site's origin (put it in the widget's allowed_origins). */
  origin: string;
  /** A page of the site embedding widget.js for the widget. */
  pageUrl(widgetId: string): string;
  close(): Promise<void>;
}

/** A customer's site on its own origin (http://localhost:<port>; the API is at 127.0.0.1), embedding the widget's script. */
export async function startWidgetSite(apiBaseUrl: string): Promise<WidgetSite> {
  const server = http.createServer((req, res) => {
    const id = new URL(req.url ?? '/', 'http://site').searchParams.get('widget') ?? '';
    if (!/^[0-9a-f-]{36}$/.test(id)) return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title><link rel="icon" href="data:,"></head>
<body><h1>Shop</h1><script src="${apiBaseUrl}/widget.js" data-widget-id="${id}" async></script></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    pageUrl: (widgetId) => `${origin}/?widget=${widgetId}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface WidgetPage {
  page: Page;
  /** The widget's page, inside its iframe on the site. */
  frame: Frame;
  /** Errors the site or the widget logged or threw. */
  errors: string[];
  /** Presses the start button (the microphone is asked for, the session opened, the engine's socket opened). */
  start(): Promise<void>;
  hangUp(): Promise<void>;
  /** The page's state: idle, connecting, live, ended, error. */
  state(): Promise<string>;
  /** Whether agent audio is coming out now. */
  playing(): Promise<boolean>;
  status(): Promise<string>;
  /** The transcript lines: role and text. */
  transcript(): Promise<{ role: string; text: string }[]>;
}

/**
 * Opens the site's page, clicks the floating button and returns the widget's page in its iframe, ready to start.
 * `initScript` runs in every frame before its own scripts (to observe what the widget's page does).
 */
export async function widgetPage(
  browser: Browser,
  site: WidgetSite,
  widgetId: string,
  options: { initScript?: () => void } = {},
): Promise<WidgetPage> {
  const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
  if (options.initScript) await page.addInitScript(options.initScript);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('response', (r) => r.status() >= 400 && errors.push(`${r.status()} ${r.url()}`));
  await page.goto(site.pageUrl(widgetId));
  await page.locator(`[data-voice-widget="${widgetId}"] button`).click({ timeout: 15_000 });
  const iframe = await page.waitForSelector(`[data-voice-widget="${widgetId}"] iframe`, { timeout: 15_000 });
  const frame = (await iframe.contentFrame())!;
  await frame.waitForSelector('#start', { timeout: 15_000 });
  const body = (name: string) => frame.locator('body').getAttribute(`data-${name}`);
  return {
    page,
    frame,
    errors,
    start: () => frame.click('#start'),
    hangUp: () => frame.click('#hangup'),
    state: async () => (await body('state')) ?? '',
    playing: async () => (await body('playing')) === 'true',
    status: async () => (await frame.locator('#status').textContent()) ?? '',
    transcript: () =>
      frame.$$eval('#transcript li', (items) => items.map((li) => ({ role: li.className.split(' ')[0]!, text: li.textContent ?? '' }))),
  };
}

/** A published Acme Parts front-desk agent with a widget for `origin`. */
export async function publishedFrontDeskWidget(
  ctx: TestContext,
  token: string,
  origin: string,
): Promise<{ agentId: string; widgetId: string }> {
  const call = (method: string, p: string, body?: unknown) => ctx.request(method, p, { token, body });
  const agent = (await call('POST', '/core/agents', { name: 'Front desk' })).body;
  await call('POST', `/core/agents/${agent.id}/versions`, {
    config: { instructions: 'You are the front desk of Acme Parts.', first_message: 'Hello, Acme Parts here.' },
  });
  expect((await call('POST', `/core/agents/${agent.id}/versions/1/publish`, {})).status).toBe(200);
  const res = await call('POST', `/core/agents/${agent.id}/widgets`, { name: 'Site bubble', allowed_origins: [origin] });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { agentId: agent.id as string, widgetId: res.body.id as string };
}
