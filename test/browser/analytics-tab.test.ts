import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeReaderPools } from '../../db/analytics-assistant';
import { analyticsTenant, seedCrm } from '../support/analytics';
import { chromiumFor } from '../support/browser';
import { createTestContext, type TestContext } from '../support/context';
import { startFakeChatLlm, type FakeChatLlm } from '../support/fake-chat-llm-server';
import { createOrgKey } from '../support/identity';

// The Analytics tab of the chat page in headless Chromium: ask, see the SQL, the result table and its bar chart.

const executablePath = chromiumFor('Analytics tab test');
const shots = process.env.AI_CHAT_SCREENSHOT_DIR ?? path.join(os.tmpdir(), 'ai-chat-screenshots');

describe.skipIf(!executablePath)('the Analytics tab in a browser', () => {
  let ctx: TestContext;
  let llm: FakeChatLlm;
  let browser: Browser;
  let key: string;
  beforeAll(async () => {
    llm = await startFakeChatLlm();
    ctx = await createTestContext({ worker: true, env: { LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'fake-sql' } });
    const tenant = await analyticsTenant(ctx);
    await seedCrm(ctx.deps.sql, tenant.orgId, 'A');
    key = await createOrgKey(ctx, tenant.session, { scopes: ['data:access', 'api:read'] });
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await closeReaderPools();
    await ctx?.close();
    await llm?.close();
  });

  it('shows the SQL, a result table and a bar chart for one category and one number', { timeout: 120_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`${ctx.baseUrl}/ai/chat`);
    await page.fill('#key', key);
    await page.click('#save-key');
    await page.click('.tabs button[data-tab="analytics"]');
    expect(await page.locator('main[data-panel="chat"]').isHidden()).toBe(true);

    llm.script.push(
      {
        toolCalls: [{ name: 'run_sql', arguments: { sql: 'SELECT stage, sum(value) AS total FROM deals GROUP BY stage ORDER BY stage' } }],
      },
      { text: 'Negotiation holds the most value.' },
    );
    await page.fill('#question', 'Deal value per stage?');
    await page.click('#ask');
    await expect
      .poll(() => page.locator('#answers .msg.assistant .text').last().textContent(), { timeout: 30_000 })
      .toBe('Negotiation holds the most value.');
    expect(await page.locator('#answers .analytics-sql').first().textContent()).toContain('GROUP BY stage');
    expect(await page.locator('#answers table.result tr').count()).toBe(5); // header + 4 stages
    expect(await page.locator('#answers [data-chart="bar"] .row').count()).toBe(4);
    await page.screenshot({ path: path.join(shots, 'analytics.png') });
    await expect.poll(() => page.locator('#conversations li').count()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('keeps a wide result inside its card: the table scrolls sideways, long SQL wraps, the page never scrolls sideways', {
    timeout: 120_000,
  }, async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${ctx.baseUrl}/ai/chat`);
    await page.fill('#key', key);
    await page.click('#save-key');
    await page.click('.tabs button[data-tab="analytics"]');
    // 24 named columns and a 300-character value: far wider than the card; one 300-character word in the SQL.
    const columns = Array.from({ length: 24 }, (_, i) => `name AS account_name_column_${i}`).join(', ');
    const sql = `SELECT ${columns}, '${'x'.repeat(300)}' AS filler FROM deals ORDER BY name LIMIT 3`;
    llm.script.push({ toolCalls: [{ name: 'run_sql', arguments: { sql } }] }, { text: 'Here are the deals, wide.' });
    await page.fill('#question', 'Every deal, every column?');
    await page.click('#ask');
    await expect
      .poll(() => page.locator('#answers .msg.assistant .text').last().textContent(), { timeout: 30_000 })
      .toBe('Here are the deals, wide.');
    expect(await page.locator('#answers table.result tr').count()).toBe(4);

    // Found and measured in one step inside the page: the answer is rendered again once its conversation is
    // stored, and an element found in one step and measured in the next may be detached by then (its computed
    // style is then empty).
    const box = (selector: string) =>
      page.locator('body').evaluate((body, sel) => {
        const e = [...body.querySelectorAll(sel)].at(-1);
        if (!e) return { scroll: 0, client: 0, overflowX: 'missing' };
        return { scroll: e.scrollWidth, client: e.clientWidth, overflowX: e.ownerDocument.defaultView!.getComputedStyle(e).overflowX };
      }, selector);
    // The finished answer is laid out again once its conversation is stored: measure after it has a width.
    await expect.poll(async () => (await box('#answers .msg.assistant')).client, { timeout: 10_000 }).toBeGreaterThan(0);
    // The table's card scrolls sideways within the answer; the answer and its SQL stay within their width.
    const card = await box('#answers .result-card');
    expect(card.overflowX).toBe('auto');
    expect(card.scroll).toBeGreaterThan(card.client);
    const answer = await box('#answers .msg.assistant');
    expect(answer.scroll).toBeLessThanOrEqual(answer.client);
    expect(card.client).toBeLessThanOrEqual(answer.client);
    const query = await box('#answers .analytics-sql');
    expect(query.scroll).toBeLessThanOrEqual(query.client);
    // The page (its root element) and the answers' column never scroll sideways.
    const pageWidth = await page.locator('#answers').evaluate((answers) => {
      const root = answers.ownerDocument.documentElement;
      return { scroll: root.scrollWidth, client: root.clientWidth, answers: answers.scrollWidth - answers.clientWidth };
    });
    expect(pageWidth.scroll).toBeLessThanOrEqual(pageWidth.client);
    expect(pageWidth.answers).toBeLessThanOrEqual(0);
    // And it does scroll: the last column can be brought into view.
    const scrolled = await page.locator('body').evaluate((body) => {
      const e = [...body.querySelectorAll('#answers .result-card')].at(-1);
      if (!e) return 0;
      e.scrollLeft = e.scrollWidth;
      return e.scrollLeft;
    });
    expect(scrolled).toBeGreaterThan(0);
    await page.screenshot({ path: path.join(shots, 'analytics-wide.png') });
    expect(errors).toEqual([]);
  });
});
