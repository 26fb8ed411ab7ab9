import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumFor } from '../support/browser';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { createOrgKey, newTenant } from '../support/identity';

// The chat page as a person uses it, in headless Chromium driven by Playwright: paste a key, start a
// chat, watch the answer stream, approve a change. Screenshots go to AI_CHAT_SCREENSHOT_DIR (default:
// the OS temp dir) for a look by eye.

const executablePath = chromiumFor('AI chat page test');
const shots = process.env.AI_CHAT_SCREENSHOT_DIR ?? path.join(os.tmpdir(), 'ai-chat-screenshots');

describe.skipIf(!executablePath)('the chat page in a browser', () => {
  let ctx: TestContext;
  let llm: FakeChatLlm;
  let browser: Browser;
  let key: string;
  let session: string;
  let accountId: string;
  beforeAll(async () => {
    llm = await startFakeChatLlm();
    ctx = await createTestContext({ worker: true, env: { LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'fake-chat' } });
    ({ session } = await newTenant(ctx, ['api:read', 'api:manage']));
    key = await createOrgKey(ctx, session, { scopes: ['api:read', 'api:manage'] });
    accountId = (await ctx.request('POST', '/accounts', { token: session, body: { name: 'Globex', industry: 'retail' } })).body.id;
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  });
  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
    await llm?.close();
  });

  it('streams an answer, then commits a change once Approve is clicked', { timeout: 120_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    const res = await page.goto(`${ctx.baseUrl}/ai/chat`);
    expect(res!.headers()['content-security-policy']).toContain("connect-src 'self'");
    await page.fill('#key', key);
    await page.click('#save-key');
    await page.click('#new-chat');
    await page.locator('#chats li button[aria-current="true"]').waitFor();

    llm.script.push({ text: 'Globex is a retail account with no open deals.', delayMs: 20 });
    await page.fill('#prompt', 'Tell me about Globex');
    await page.click('#send');
    await expect
      .poll(() => page.locator('.msg.assistant .text').last().textContent(), { timeout: 30_000 })
      .toBe('Globex is a retail account with no open deals.');
    expect(await page.locator('.msg.user').first().textContent()).toBe('Tell me about Globex');

    llm.script.push(
      {
        text: 'I propose this change.',
        toolCalls: [{ name: 'update_account', arguments: { account_id: accountId, changes: { industry: 'software' } } }],
      },
      { text: 'Globex is now filed under software.' },
    );
    await page.fill('#prompt', 'Globex sells software now');
    await page.click('#send');
    const approve = page.locator('.tool[data-state="approval-requested"] .approve');
    await approve.waitFor({ timeout: 30_000 });
    await page.screenshot({ path: path.join(shots, 'approval.png') });
    expect((await ctx.request('GET', `/accounts/${accountId}`, { token: session })).body.industry).toBe('retail');
    await approve.click();
    await expect
      .poll(() => page.locator('.msg.assistant .text').last().textContent(), { timeout: 30_000 })
      .toBe('Globex is now filed under software.');
    await page.locator('.tool[data-tool="update_account"][data-state="output-available"]').waitFor();
    await page.screenshot({ path: path.join(shots, 'approved.png') });
    expect((await ctx.request('GET', `/accounts/${accountId}`, { token: session })).body.industry).toBe('software');
    expect(await page.locator('#chats li').count()).toBe(1);
    expect(errors).toEqual([]);
  });
});
