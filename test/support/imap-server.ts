import { createRequire } from 'node:module';
import { freePort } from '../../dev-servers/ports';

// A real IMAP4rev1 server on loopback for tests: npm `hoodiecrow-imap`, a scriptable in-memory server
// (nothing written to disk). Messages can be appended while clients are connected.

const require = createRequire(import.meta.url);

interface HoodiecrowServer {
  listen(port: number, host: string, callback: () => void): void;
  close(callback: () => void): void;
  appendMessage(mailbox: string, flags: string[], internaldate: Date | string, raw: string): { message: { uid: number } };
  getMailbox(path: string): { uidvalidity: number; uidnext: number; messages: unknown[] };
}
const hoodiecrow = require('hoodiecrow-imap') as (options: Record<string, unknown>) => HoodiecrowServer;

export interface TestImapServer {
  host: string;
  port: number;
  user: string;
  password: string;
  /** Appends a message to INBOX; returns its UID. */
  deliver(raw: string): number;
  close(): Promise<void>;
}

export async function startImapServer(options: { user?: string; password?: string; uidValidity?: number } = {}): Promise<TestImapServer> {
  const user = options.user ?? 'mailbox@outreach.test';
  const password = options.password ?? 'imap-test-password';
  const server = hoodiecrow({
    plugins: ['ID', 'UNSELECT', 'ENABLE'],
    users: { [user]: { password } },
    storage: { INBOX: { messages: [], uidvalidity: options.uidValidity ?? 1 }, '': { separator: '/', folders: {} } },
    debug: false,
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    deliver: (raw) => server.appendMessage('INBOX', [], new Date(), raw).message.uid,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
