import { ImapFlow } from 'imapflow';

// Reading new messages of a mailbox over IMAP (imapflow), bounded in time and in count.

export interface ImapSettings {
  /** A host name or an address; with an address, `servername` names the host for TLS. */
  host: string;
  servername?: string;
  port: number;
  secure: boolean;
  user: string;
  password: string;
}

export interface ImapFetchOptions {
  /** Deadline of the whole poll: connect, login, select and fetch. */
  timeoutMs: number;
  /** Folder to read; INBOX by default. */
  mailbox?: string;
  /** Most messages handed back by one poll (lowest UIDs first, so the next poll continues after them). */
  maxMessages?: number;
  /** The UIDVALIDITY `sinceUid` was read under; when the server's differs, UIDs were reassigned and reading starts over. */
  uidValidity?: string | null;
  /** Extra TLS options (tests: a self-signed certificate). */
  tls?: { rejectUnauthorized?: boolean };
}

export interface ImapFetchResult {
  /** The folder's UIDVALIDITY, as a decimal string (it may exceed 2^53). */
  uidValidity: string;
  /** The highest UID seen (what to pass as `sinceUid` next time); `sinceUid` unchanged when nothing is new. */
  lastUid: number;
  messages: { uid: number; raw: Buffer }[];
}

export class ImapError extends Error {}

/**
 * Messages with a UID above `sinceUid` (every message when null, or when UIDVALIDITY changed). The
 * password never reaches a log: imapflow's own logger is off.
 */
export async function fetchNewMessages(settings: ImapSettings, sinceUid: number | null, opts: ImapFetchOptions): Promise<ImapFetchResult> {
  const client = new ImapFlow({
    host: settings.host,
    ...(settings.servername ? { servername: settings.servername } : {}),
    port: settings.port,
    secure: settings.secure,
    auth: { user: settings.user, pass: settings.password },
    logger: false,
    connectionTimeout: opts.timeoutMs,
    greetingTimeout: opts.timeoutMs,
    socketTimeout: opts.timeoutMs,
    disableAutoIdle: true,
    ...(opts.tls ? { tls: opts.tls } : {}),
  });
  client.on('error', () => {}); // surfaced through the pending call; an unhandled 'error' event would crash the process
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      client.close();
      reject(new ImapError(`IMAP poll of ${settings.host}:${settings.port} took longer than ${opts.timeoutMs} ms`));
    }, opts.timeoutMs);
  });
  try {
    return await Promise.race([poll(client, sinceUid, opts), deadline]);
  } catch (error) {
    if (error instanceof ImapError) throw error;
    const e = error as { message?: string; responseText?: string; authenticationFailed?: boolean };
    throw new ImapError(e.authenticationFailed ? 'IMAP login failed' : `IMAP poll failed: ${e.responseText ?? e.message ?? String(error)}`);
  } finally {
    clearTimeout(timer);
    if (client.usable) await client.logout().catch(() => client.close());
    else client.close();
  }
}

async function poll(client: ImapFlow, sinceUid: number | null, opts: ImapFetchOptions): Promise<ImapFetchResult> {
  await client.connect();
  const lock = await client.getMailboxLock(opts.mailbox ?? 'INBOX', { readOnly: true });
  try {
    const box = client.mailbox;
    if (!box) throw new ImapError('IMAP server selected no mailbox');
    const uidValidity = String(box.uidValidity);
    const from = sinceUid === null || (opts.uidValidity != null && opts.uidValidity !== uidValidity) ? 0 : sinceUid;
    const max = opts.maxMessages ?? 100;
    const messages: { uid: number; raw: Buffer }[] = [];
    // Nothing new: UIDNEXT says so without a SEARCH (a `n:*` range would match the last message).
    if (box.exists > 0 && (box.uidNext === undefined || box.uidNext > from + 1)) {
      // UIDs first, so only the page's sources are downloaded; `n:*` always includes the highest UID.
      const found = await client.search({ uid: `${from + 1}:*` }, { uid: true });
      const uids = (found || [])
        .filter((uid) => uid > from)
        .sort((a, b) => a - b)
        .slice(0, max);
      if (uids.length > 0) {
        for await (const msg of client.fetch(uids.join(','), { uid: true, source: true }, { uid: true })) {
          if (msg.source) messages.push({ uid: msg.uid, raw: msg.source });
        }
      }
    }
    messages.sort((a, b) => a.uid - b.uid);
    const page = messages;
    const lastUid = page.length > 0 ? page[page.length - 1]!.uid : from;
    return { uidValidity, lastUid, messages: page };
  } finally {
    lock.release();
  }
}
