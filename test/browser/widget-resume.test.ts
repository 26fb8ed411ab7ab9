import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESUME_LINE } from '../../domain/voice-resume';
import { chromiumFor } from '../support/browser';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { newTenant, type Tenant } from '../support/identity';
import { startChildEngine, type ChildEngine } from '../support/voice/child-engine';
import { speechServer, startTestEngine, type TestEngine } from '../support/voice/engine';
import { publishedFrontDeskWidget, type WidgetSite, startWidgetSite, toneWav, widgetBrowserArgs, widgetPage } from '../support/widget-page';

// The widget's page survives its engine, in headless Chromium: the page talks to an engine process through
// the public voice address (a TCP relay standing for the Service: new connections go to the engines that
// are up); the engine is killed with SIGKILL, and the page, with no key of its own, resumes the same
// conversation on the other engine with its resume token and hears the agent again.

const executablePath = chromiumFor('Widget page resuming on another engine');
const { url: speechUrl, describe: needsSpeech } = speechServer();

/** The public voice address: each new connection goes to `target()`, and closes when its engine's side does. */
function startRelay(target: () => number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target(), '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        close: async () => {
          for (const s of sockets) s.destroy();
          await new Promise((r) => server.close(r));
        },
      }),
    ),
  );
}

/** Runs in every frame before its scripts: when the page handed the agent's audio to its playback (Date.now()). */
function observePlayback() {
  const w = globalThis as unknown as Record<string, any>;
  const seen: number[] = [];
  w.__audioAt = seen;
  const post = w.MessagePort.prototype.postMessage;
  w.MessagePort.prototype.postMessage = function (this: unknown, message: any, ...rest: unknown[]) {
    if (message && message.type === 'audio' && message.samples) seen.push(Date.now());
    return post.call(this, message, ...rest);
  };
}

(executablePath ? needsSpeech : describe.skip)('the widget page resumes on another engine', () => {
  let ctx: TestContext;
  let llm: FakeChatLlm;
  let first: ChildEngine;
  let second: TestEngine;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let site: WidgetSite;
  let browser: Browser;
  let t: Tenant;
  let engineUp: () => number = () => 0;

  beforeAll(async () => {
    llm = await startFakeChatLlm();
    relay = await startRelay(() => engineUp());
    const env = { VOICE_PUBLIC_URL: `ws://127.0.0.1:${relay.port}`, LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'fake-chat' };
    ctx = await createTestContext({ worker: true, env });
    [first, second] = await Promise.all([startChildEngine(ctx, env, speechUrl), startTestEngine(ctx, speechUrl)]);
    const port = (url: string) => Number(new URL(url).port);
    engineUp = () => (first.proc.exitCode === null && first.proc.signalCode === null ? port(first.url) : port(second.url));
    site = await startWidgetSite(ctx.baseUrl);
    t = await newTenant(ctx);
    // A silent microphone: the caller says nothing, the agent's lines are what is checked.
    const wav = toneWav(path.join(os.tmpdir(), `widget-resume-mic-${process.pid}.wav`), { amplitude: 0 });
    browser = await chromium.launch({ executablePath, args: widgetBrowserArgs(wav) });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    first?.kill();
    await second?.close();
    await relay?.close();
    await ctx?.close();
    await llm?.close();
  });

  it('reconnects after its engine is killed and hears the agent again, in the same conversation', { timeout: 120_000 }, async () => {
    const { agentId, widgetId } = await publishedFrontDeskWidget(ctx, t.session, site.origin);
    const call = (method: string, p: string, body?: unknown) => ctx.request(method, p, { token: t.session, body });
    const widget = await widgetPage(browser, site, widgetId, { initScript: observePlayback });
    await widget.start();
    await waitFor(async () => (await widget.transcript()).find((line) => /acme/i.test(line.text)), 30_000, 'the greeting');

    const killedAt = Date.now();
    first.kill();
    const back = await waitFor(
      async () => (await widget.transcript()).find((line) => line.role === 'agent' && line.text === RESUME_LINE),
      30_000,
      'the resume line on the page',
    );
    expect(back).toBeDefined();
    const audioAt = await widget.frame.evaluate(() => (globalThis as unknown as { __audioAt: number[] }).__audioAt);
    const firstAudio = audioAt.find((at) => at > killedAt);
    console.log(`widget page: silence from the kill to the agent's audio again: ${firstAudio! - killedAt} ms`);
    expect(firstAudio).toBeDefined();
    expect(await widget.state()).toBe('live');
    expect(await widget.frame.locator('body').getAttribute('data-reconnects')).toBe('1');

    await widget.hangUp();
    const ended = await waitFor(
      async () => {
        const list = await call('GET', `/core/agents/${agentId}/conversations`);
        const rows = list.body.data as { id: string; ended_at: string | null }[];
        if (rows.length !== 1) return undefined; // one conversation, taken over, not a second one
        const detail = await call('GET', `/core/agents/${agentId}/conversations/${rows[0]!.id}`);
        return detail.body.summary ? detail.body : undefined;
      },
      30_000,
      'the one conversation summarized',
    );
    const turns = (ended.turns as { role: string; text: string }[]).map((turn) => turn.text);
    expect(turns).toEqual(['Hello, Acme Parts here.', RESUME_LINE]);
    expect(ended.end_reason).toBe('caller_hung_up');
  });
});
