import crypto from 'node:crypto';
import { expect } from 'vitest';
import type { TestContext } from './context';

/**
 * An SMTP mailbox sending to the tests' SMTP server on `smtpPort`, written straight to the database (the
 * mailboxes API and its host checks are another area's): open round the clock, 50 a day, no spacing
 * between sends unless `values` say otherwise.
 */
export async function insertSmtpMailbox(
  ctx: Pick<TestContext, 'deps'>,
  orgId: string,
  smtpPort: number,
  values: Record<string, unknown> = {},
): Promise<string> {
  const id = crypto.randomUUID();
  await ctx.deps.sql`
    INSERT INTO outreach_mailboxes ${ctx.deps.sql({
      id,
      org_id: orgId,
      email_address: `sender-${id.slice(0, 8)}@outreach.test`,
      display_name: 'Sam Sender',
      kind: 'smtp',
      smtp_host: '127.0.0.1',
      smtp_port: smtpPort,
      smtp_secure: false,
      window_start: '00:00',
      window_end: '24:00',
      window_days: [1, 2, 3, 4, 5, 6, 7],
      daily_limit: 50,
      send_gap_min_seconds: 0,
      send_gap_max_seconds: 0,
      created_by: 'user:test',
      ...values,
    } as never)}`;
  return id;
}

/**
 * The sequencer calls a test makes as one caller; `who` is read at each call, so a test file can build
 * them before its context and tenant exist (in beforeAll).
 */
export function sequencerCalls(who: () => { ctx: Pick<TestContext, 'request'>; token: string }) {
  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const { ctx, token } = who();
    return ctx.request(method, path, { token, ...(body === undefined ? {} : { body }) });
  };
  return {
    async sequence(body: Record<string, unknown>): Promise<{ id: string }> {
      const res = await call('POST', '/outreach/sequencer/sequences', { name: 'seq', ...body });
      expect(res.status, res.text).toBe(200);
      return res.body;
    },
    activate: async (id: string) => expect((await call('POST', `/outreach/sequencer/sequences/${id}/activate`)).status).toBe(200),
    async enroll(seqId: string, contactIds: string[]) {
      const res = await call('POST', `/outreach/sequencer/sequences/${seqId}/enrollments`, { contact_ids: contactIds });
      expect(res.status, res.text).toBe(200);
      return res.body.enrolled as { id: string; contact_id: string }[];
    },
    enrollmentOf: async (seqId: string, id: string) => (await call('GET', `/outreach/sequencer/sequences/${seqId}/enrollments/${id}`)).body,
  };
}

/** A prospect's address no other test uses. */
export const uniqueEmail = (name: string) => `${name}-${crypto.randomBytes(4).toString('hex')}@prospects.test`;
