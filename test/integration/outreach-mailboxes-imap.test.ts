import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev-servers/ports';
import { ImapError, fetchNewMessages } from '../../platform/adapters/mail/imap';
import { startImapServer, type TestImapServer } from '../support/imap-server';

// platform/adapters/mail/imap.ts against a real IMAP server on loopback (hoodiecrow-imap).

let imap: TestImapServer;
beforeAll(async () => {
  imap = await startImapServer({ uidValidity: 4242 });
});
afterAll(() => imap?.close());

const settings = () => ({ host: imap.host, port: imap.port, secure: false, user: imap.user, password: imap.password });
const raw = (n: number) =>
  `From: Lead ${n} <lead${n}@prospect.test>\r\nTo: ${imap.user}\r\nSubject: Re: hello ${n}\r\nMessage-ID: <reply-${n}@prospect.test>\r\nIn-Reply-To: <step-${n}@outreach.test>\r\n\r\nThanks ${n}!\r\n`;

describe('fetchNewMessages', () => {
  it('reads nothing from an empty INBOX, then every new message once, in UID order', async () => {
    const empty = await fetchNewMessages(settings(), null, { timeoutMs: 10_000 });
    expect(empty).toEqual({ uidValidity: '4242', lastUid: 0, messages: [] });

    const uids = [imap.deliver(raw(1)), imap.deliver(raw(2))];
    const first = await fetchNewMessages(settings(), empty.lastUid, { timeoutMs: 10_000, uidValidity: empty.uidValidity });
    expect(first.messages.map((m) => m.uid)).toEqual(uids);
    expect(first.lastUid).toBe(uids[1]);
    expect(first.messages[0]!.raw.toString()).toContain('Message-ID: <reply-1@prospect.test>');
    expect(Buffer.isBuffer(first.messages[1]!.raw)).toBe(true);

    // Nothing new: the same cursor comes back, no message (an `n:*` range would repeat the last one).
    const again = await fetchNewMessages(settings(), first.lastUid, { timeoutMs: 10_000, uidValidity: first.uidValidity });
    expect(again).toEqual({ uidValidity: '4242', lastUid: first.lastUid, messages: [] });

    const third = imap.deliver(raw(3));
    const next = await fetchNewMessages(settings(), again.lastUid, { timeoutMs: 10_000, uidValidity: again.uidValidity });
    expect(next.messages.map((m) => m.uid)).toEqual([third]);
  });

  it('hands back at most maxMessages per poll, lowest UIDs first, so the next poll continues', async () => {
    const start = (await fetchNewMessages(settings(), null, { timeoutMs: 10_000 })).lastUid;
    const delivered = [4, 5, 6, 7, 8].map((n) => imap.deliver(raw(n)));
    const page1 = await fetchNewMessages(settings(), start, { timeoutMs: 10_000, maxMessages: 3, uidValidity: '4242' });
    expect(page1.messages.map((m) => m.uid)).toEqual(delivered.slice(0, 3));
    const page2 = await fetchNewMessages(settings(), page1.lastUid, { timeoutMs: 10_000, maxMessages: 3, uidValidity: '4242' });
    expect(page2.messages.map((m) => m.uid)).toEqual(delivered.slice(3));
  });

  it('starts over when UIDVALIDITY changed since the cursor was read', async () => {
    const all = await fetchNewMessages(settings(), 5, { timeoutMs: 10_000, uidValidity: '1', maxMessages: 1000 });
    expect(all.uidValidity).toBe('4242');
    expect(all.messages[0]!.uid).toBe(1);
  });

  it('a wrong password is an ImapError that names no secret', async () => {
    const error = await fetchNewMessages({ ...settings(), password: 'Wrong-Secret-123' }, null, { timeoutMs: 10_000 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ImapError);
    expect((error as Error).message).toBe('IMAP login failed');
  });

  it('a server that never greets fails within the timeout', async () => {
    const net = await import('node:net');
    const silent = net.createServer(() => {});
    const port = await freePort();
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const error = await fetchNewMessages({ ...settings(), port }, null, { timeoutMs: 1500 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ImapError);
      expect(Date.now() - started).toBeLessThan(20_000); // the timeout ended it: a server never greeting would hang it
    } finally {
      silent.close();
    }
  });
});
