import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/campaigns';
import { createTestContext, type TestContext } from '../support/context';
import { createContact, crmTenant, insertAccount, type CrmTenant } from '../support/crm-contacts';
import { keepHistory } from '../support/histories';

// The built-in simulated vendor end to end: it posts its signed event stream to this service's own
// capture webhook, and the bot's workflow writes the transcript to the CRM as a `meeting` activity.

let ctx: TestContext;
let a: CrmTenant;
beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: {
      MEETING_WEBHOOK_SECRETS: `whsec_${crypto.randomBytes(24).toString('base64')}`,
      MEETING_SIMULATED_STEP_MS: '100',
      MEETING_SIMULATED_CALL_MS: '400',
    },
  });
  a = await crmTenant(ctx);
});
afterAll(() => ctx?.close());

const readBot = async (id: string) => (await ctx.request('GET', `/meetings/bots/${id}`, { token: a.session })).body;
const waitForStatus = (id: string, statuses: string[]) =>
  waitFor(
    async () => {
      const bot = await readBot(id);
      return statuses.includes(bot.status) ? bot : undefined;
    },
    30_000,
    `bot ${id} ${statuses.join('|')}`,
  );

describe('simulated meeting vendor', () => {
  it('follows joining → in call → recording → call ended → transcribing → completed and writes a meeting activity', async () => {
    const account = await insertAccount(ctx, a.orgId, 'Globex');
    const deal = (await ctx.request('POST', '/deals', { token: a.session, body: { name: 'Globex renewal', account_id: account } })).body;
    const contact = await createContact(ctx, a, { email: `sim-${crypto.randomUUID()}@example.com` });
    const created = await ctx.request('POST', '/meetings/bots', {
      token: a.session,
      body: { meeting_url: 'https://meet.google.com/abc-defg-hij', deal_id: deal.id, contact_ids: [contact.id] },
    });
    expect(created.status, created.text).toBe(200);
    const bot = await waitForStatus(created.body.id, ['completed', 'failed', 'canceled']);
    expect(bot.status, JSON.stringify(bot)).toBe('completed');
    expect(bot.vendor).toBe('simulated');
    expect(bot.vendor_bot_id).toMatch(/^sim_/);
    expect(bot.status_history.map((h: { status: string }) => h.status)).toEqual(
      expect.arrayContaining(['scheduled', 'joining', 'waiting_room', 'in_call', 'recording', 'call_ended', 'transcribing', 'completed']),
    );
    const order = ['scheduled', 'joining', 'waiting_room', 'in_call', 'recording', 'call_ended', 'transcribing', 'completed'];
    const seen = bot.status_history.map((h: { status: string }) => order.indexOf(h.status));
    expect(seen).toEqual([...seen].sort((x: number, y: number) => x - y));
    expect(bot.transcript.text).toContain('simulated');
    expect(bot.transcript.attendees).toContainEqual({ name: 'Alex Rivera (simulated)', email: 'alex.rivera@simulated.invalid' });
    expect(bot.recording).toMatchObject({ id: expect.stringMatching(/^sim_rec_/), url: expect.stringContaining('simulated') });
    expect(bot.recording.duration_seconds).toBeGreaterThanOrEqual(0);

    // On the deal, and on the deal's account: one `meeting` activity with the transcript.
    const feed = await ctx.request('GET', `/deals/${deal.id}/activities`, { token: a.session });
    expect(feed.status).toBe(200);
    const items = Array.isArray(feed.body) ? feed.body : (feed.body.activities ?? feed.body.data);
    const meeting = items.find((x: { id: string }) => x.id === bot.activity_id);
    expect(meeting).toMatchObject({
      type: 'meeting',
      provider: 'google_meet',
      contact_id: contact.id,
      account_id: account,
      deal_id: deal.id,
      recording_url: bot.recording.url,
      location: 'https://meet.google.com/abc-defg-hij',
    });
    expect(meeting.transcript).toBe(bot.transcript.text);
    expect(meeting.attendees).toEqual(bot.transcript.attendees);
    expect(meeting.summary).toContain('simulated');
    const accountFeed = await ctx.request('GET', `/accounts/${account}/activities`, { token: a.session });
    const accountItems = Array.isArray(accountFeed.body) ? accountFeed.body : (accountFeed.body.activities ?? accountFeed.body.data);
    expect(accountItems.map((x: { id: string }) => x.id)).toContain(bot.activity_id);

    // "Meeting transcript ready" went to the notification outbox with the activity, addressed to the bot's sender.
    const [sender] = await ctx.deps.sql<{ id: string }[]>`SELECT id FROM users WHERE external_id = ${a.user}`;
    const events = await ctx.deps
      .sql`SELECT event_type, entity_type, recipient_user_ids, payload FROM notification_outbox WHERE org_id = ${a.orgId} AND entity_id = ${bot.id}`;
    expect(events).toEqual([
      {
        event_type: 'meeting.transcript_ready',
        entity_type: 'meeting_bot',
        recipient_user_ids: [sender!.id],
        payload: expect.objectContaining({ bot_id: bot.id, activity_id: bot.activity_id, deal_id: deal.id }),
      },
    ]);

    const result = await ctx.deps.temporal.workflow.getHandle(bot.workflow_id).result();
    expect(result).toBe('completed');
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, bot.workflow_id, 'meeting-bot-simulated');
  });

  it('removing a bot before join_at cancels it without creating a vendor bot', async () => {
    const created = await ctx.request('POST', '/meetings/bots', {
      token: a.session,
      body: { meeting_url: 'https://zoom.us/j/1234567890', join_at: new Date(Date.now() + 3_600_000).toISOString() },
    });
    expect((await ctx.request('DELETE', `/meetings/bots/${created.body.id}`, { token: a.session })).status).toBe(202);
    const bot = await waitForStatus(created.body.id, ['canceled', 'failed', 'completed']);
    expect(bot).toMatchObject({ status: 'canceled', status_reason: 'removed before joining', vendor_bot_id: null });
    expect(bot.ended_at).toEqual(expect.any(String));
    expect(await ctx.deps.temporal.workflow.getHandle(bot.workflow_id).result()).toBe('canceled');
    keepHistory(ctx.config.TEMPORAL_ADDRESS!, bot.workflow_id, 'meeting-bot-canceled');
  });
});
