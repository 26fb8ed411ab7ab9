import net from 'node:net';
import type { ConnectionUsage } from './postgres-pool';
import { outsideRequestScope } from './request-scope';

/** The error code of a connection closed because Postgres stopped answering it. */
export const DATABASE_RESPONSE_TIMEOUT = 'DATABASE_RESPONSE_TIMEOUT';
/** The error code of a connection refused at once because the previous attempt failed moments ago. */
export const DATABASE_UNREACHABLE = 'DATABASE_UNREACHABLE';

type SocketOptions = { host: string[]; port: number[]; path?: string | false };

const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;
const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'
const FLUSH = 0x48; // 'H'
const READY_FOR_QUERY = 0x5a; // 'Z'
const IDLE = 0x49; // 'I': ReadyForQuery's status outside a transaction

/**
 * Reads the framing of the Postgres wire protocol (a type byte, then a 4-byte length that counts
 * itself), calling `onMessage` with each message's type. `untypedFirst` reads the client's first
 * message (startup, SSL or cancel request), which has a length and a code but no type byte.
 */
class Framer {
  private header = Buffer.alloc(8);
  private have = 0;
  private skip = 0;
  private first: boolean;
  private statusNext = false;

  constructor(
    untypedFirst: boolean,
    private readonly onMessage: (type: number, code?: number) => void,
    /** The transaction status byte of each ReadyForQuery (server to client only). */
    private readonly onStatus: (status: number) => void = () => {},
  ) {
    this.first = untypedFirst;
  }

  push(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.skip > 0) {
        if (this.statusNext) {
          this.statusNext = false;
          this.onStatus(chunk[i]!);
        }
        const n = Math.min(this.skip, chunk.length - i);
        this.skip -= n;
        i += n;
        continue;
      }
      const size = this.first ? 8 : 5;
      const n = Math.min(size - this.have, chunk.length - i);
      chunk.copy(this.header, this.have, i, i + n);
      this.have += n;
      i += n;
      if (this.have < size) return;
      this.have = 0;
      if (this.first) {
        this.first = false;
        this.skip = Math.max(0, this.header.readUInt32BE(0) - 8);
        this.onMessage(0, this.header.readUInt32BE(4));
      } else {
        this.skip = Math.max(0, this.header.readUInt32BE(1) - 4);
        this.statusNext = this.header[0] === READY_FOR_QUERY && this.skip > 0;
        this.onMessage(this.header[0]!);
      }
    }
  }
}

/**
 * A TCP socket to Postgres that is destroyed when the server owes an answer and sends nothing for
 * `timeoutMs`. Server-side limits (statement_timeout) cannot fire in a server that is frozen or cut
 * off, and TCP keepalives are answered by the kernel of a stopped process; without this, a query sent
 * to such a server waits forever and holds its pool slot.
 *
 * "Owes an answer": every Sync or simple Query (and the startup) is answered by one ReadyForQuery, and
 * a Flush by at least one message. Over TLS the bytes are opaque, so the watchdog stands down and the
 * server-side limits and keepalives are what bound the wait.
 */
export function watchedSocket(
  options: SocketOptions,
  timeoutMs: number,
  events: { ready?: () => void; failed?: () => void; usage?: ConnectionUsage } = {},
): net.Socket {
  const socket = new net.Socket();
  let startup = false; // a connection attempt, not a cancel request
  let ready = false; // the startup's ReadyForQuery came
  let owed = 0; // ReadyForQuery messages the server still owes
  let flushed = false; // a Flush waits for any message
  let blind = false;
  let status = IDLE; // of the last ReadyForQuery: I idle, T in a transaction, E in a failed one
  let inUse = false;
  let lastActivity = Date.now();
  let timer: NodeJS.Timeout | null = null;

  const waiting = () => !blind && (owed > 0 || flushed);
  const check = () => {
    timer = null;
    if (!waiting() || socket.destroyed) return;
    const quiet = Date.now() - lastActivity;
    if (quiet < timeoutMs) return arm(timeoutMs - quiet);
    const error = Object.assign(new Error(`Postgres sent nothing for ${timeoutMs} ms while a query waited`), {
      code: DATABASE_RESPONSE_TIMEOUT,
    });
    events.failed?.();
    socket.destroy(error);
  };
  const arm = (ms: number) => {
    timer = setTimeout(check, ms);
    timer.unref();
  };
  // The clock runs from the server's last message, or from the write that made it owe one: more
  // queries written to a silent server do not restart it.
  const sent = (wasWaiting: boolean) => {
    if (!wasWaiting) lastActivity = Date.now();
    if (waiting() && !timer) arm(timeoutMs);
  };
  const received = () => {
    lastActivity = Date.now();
    if (waiting() && !timer) arm(timeoutMs);
  };

  const outgoing = new Framer(true, (type, code) => {
    if (code === SSL_REQUEST) blind = true;
    else if (code !== undefined && code !== CANCEL_REQUEST) {
      startup = true;
      owed += 1; // the startup ends with ReadyForQuery
    } else if (type === SYNC || type === QUERY) owed += 1;
    else if (type === FLUSH) flushed = true;
  });
  const incoming = new Framer(
    false,
    (type) => {
      flushed = false;
      if (type === READY_FOR_QUERY && owed > 0) owed -= 1;
      if (type === READY_FOR_QUERY && !ready) {
        ready = true;
        events.ready?.();
        events.usage?.opened(socket);
      }
    },
    (s) => (status = s),
  );
  // In use: a statement runs or a transaction is open. Told to the pool's monitor on each change.
  const report = () => {
    const now = !blind && ready && (owed > 0 || flushed || status !== IDLE);
    if (now === inUse) return;
    inUse = now;
    events.usage?.busy(socket, now);
  };

  // connect() resets an own `write` property (net.Socket does so to reuse a socket): connect first.
  if (options.path) socket.connect(options.path);
  else socket.connect(options.port[0]!, options.host[0]!);
  Object.assign(socket, { host: options.host[0], port: options.port[0] }); // named in postgres.js's errors
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((chunk: unknown, ...rest: unknown[]) => {
    const wasWaiting = waiting();
    if (!blind && Buffer.isBuffer(chunk)) outgoing.push(chunk);
    sent(wasWaiting);
    report();
    const result = write(chunk, ...rest);
    if (ready && !blind) events.usage?.wrote(socket);
    return result;
  }) as typeof socket.write;
  socket.on('data', (chunk: Buffer) => {
    if (!blind) incoming.push(chunk);
    received();
    report();
  });
  socket.on('close', () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (startup && !ready) events.failed?.();
    if (ready) events.usage?.closed(socket);
  });

  return socket;
}

/**
 * The socket factory of one pool. postgres.js hands each queued query, one at a time, to a new
 * connection attempt, so against a frozen server a queue of N requests would take N / pool size
 * connect timeouts to drain. After an attempt fails (or the watchdog closes a connection), new attempts
 * fail at once for `openMs`; the queue then drains at the pool's reconnect backoff (at most a second
 * a round), and the first attempt after the window finds out whether the server is back. `usage`, when
 * given, is told how each connection is used (the pool's monitor).
 */
export function postgresSocketFactory(timeoutMs: number, openMs = 1000, usage?: ConnectionUsage): (options: SocketOptions) => net.Socket {
  let downUntil = 0;
  const events = { ready: () => (downUntil = 0), failed: () => (downUntil = Date.now() + openMs), usage };
  return (options) => {
    // Made outside the request that happens to open it: the socket's own callbacks (and queries postgres.js
    // sends from them) must not run as that request, which would be taken as its owner (postgres-pool.ts).
    if (Date.now() >= downUntil) return outsideRequestScope(() => watchedSocket(options, timeoutMs, events));
    const socket = new net.Socket();
    if (options.path) socket.connect(options.path);
    else socket.connect(options.port[0]!, options.host[0]!);
    // After postgres.js has attached its listeners (it awaits the factory).
    setImmediate(() =>
      socket.destroy(
        Object.assign(new Error('Postgres unreachable: a connection attempt failed moments ago'), { code: DATABASE_UNREACHABLE }),
      ),
    );
    return socket;
  };
}
