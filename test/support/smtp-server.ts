import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { freePort } from '../../dev-servers/ports';
import { waitFor } from './campaigns';

/** A reply the server answers a command with: `{ code: 554, message: '5.7.1 Message rejected' }`. */
export interface SmtpReply {
  code: number;
  message: string;
}

/** A received message: the SMTP envelope's recipients and the parsed message. */
export interface ReceivedMail {
  rcptTo: string[];
  mail: ParsedMail;
  /** The message exactly as received (to verify signatures over it). */
  raw: Buffer;
}

export interface TestSmtpServer {
  url: string;
  port: number;
  received: ReceivedMail[];
  /** Messages to one address so far. */
  to(address: string): ReceivedMail[];
  /** Waits until `count` messages reached the address, and returns them. */
  waitForMail(address: string, count?: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/**
 * A real SMTP server on a free local port that keeps every message it accepts, parsed. With `login`,
 * it requires that user and password (plain authentication over loopback); with `refuse`, it refuses
 * those recipients at RCPT TO with 550, or with the reply it returns (`{ code: 452, message: '4.2.2
 * Mailbox full' }`); with `refuseData`, it refuses the message after DATA with the reply it returns.
 */
export async function startSmtpServer(
  options: {
    login?: { user: string; pass: string };
    refuse?: (address: string) => boolean | SmtpReply | null;
    refuseData?: (recipients: string[]) => SmtpReply | null;
  } = {},
): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const { login, refuse, refuseData } = options;
  const server = new SMTPServer({
    authOptional: !login,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (login && auth.username === login.user && auth.password === login.pass) return callback(null, { user: login.user });
      return callback(new Error('Invalid username or password'));
    },
    // With `refuse`, such recipients are refused at RCPT TO with 550 (a receiving server's hard bounce).
    onRcptTo(address, _session, callback) {
      const refused = refuse?.(address.address);
      if (refused === true) return callback(Object.assign(new Error('5.1.1 User unknown'), { responseCode: 550 }));
      if (refused) return callback(Object.assign(new Error(refused.message), { responseCode: refused.code }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        const refused = refuseData?.(session.envelope.rcptTo.map((r) => r.address));
        if (refused) return callback(Object.assign(new Error(refused.message), { responseCode: refused.code }));
        const raw = Buffer.concat(chunks);
        simpleParser(raw)
          .then((mail) => {
            received.push({ rcptTo: session.envelope.rcptTo.map((r) => r.address), mail, raw });
            callback();
          })
          .catch(callback);
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const to = (address: string) => received.filter((r) => r.rcptTo.includes(address));
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    received,
    to,
    waitForMail: (address, count = 1, timeoutMs = 30_000) =>
      waitFor(async () => to(address).length >= count && to(address), timeoutMs, `${count} email(s) to ${address}`),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
