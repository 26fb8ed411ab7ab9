import net from 'node:net';

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

  constructor(untypedFirst: boolean, private readonly onMessage: (type: number, code?: number) => void) {
    this.first = untypedFirst;
  }

  push(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.skip > 0) {
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
  events: { ready?: () => void; failed?: () => void } = {},
): net.Socket {
  const socket = new net.Socket();
  let startup = false; // a connection attempt, not a cancel request
  let ready = false; // the startup's ReadyForQuery came
  let owed = 0; // ReadyForQuery messages the server still owes
  let flushed = false; // a Flush waits for any message
  let blind = false;
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
    }
    else if (type === SYNC || type === QUERY) owed += 1;
    else if (type === FLUSH) flushed = true;
  });
  const incoming = new Framer(false, (type) => {
    flushed = false;
    if (type === READY_FOR_QUERY && owed > 0) owed -= 1;
    if (type === READY_FOR_QUERY && !ready) {
      ready = true;
      events.ready?.();
    }
  });

  // connect() resets an own `write` property (net.Socket does so to reuse a socket): connect first.
  if (options.path) socket.connect(options.path);
  else socket.connect(options.port[0]!, options.host[0]!);
  Object.assign(socket, { host: options.host[0], port: options.port[0] }); // named in postgres.js's errors
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((chunk: unknown, ...rest: unknown[]) => {
    const wasWaiting = waiting();
    if (!blind && Buffer.isBuffer(chunk)) outgoing.push(chunk);
    sent(wasWaiting);
    return write(chunk, ...rest);
  }) as typeof socket.write;
  socket.on('data', (chunk: Buffer) => {
    if (!blind) incoming.push(chunk);
    received();
  });
  socket.on('close', () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (startup && !ready) events.failed?.();
  });

  return socket;
}

/**
 * The socket factory of one pool. postgres.js hands each queued query, one at a time, to a new
 * connection attempt, so against a frozen server a queue of N requests would take N / pool size
 * connect timeouts to drain. After an attempt fails (or the watchdog closes a connection), new attempts
 * fail at once for `openMs`; the queue then drains at the pool's reconnect backoff (at most a second
 * a round), and the first attempt after the window finds out whether the server is back.
 */
export function postgresSocketFactory(timeoutMs: number, openMs = 1000): (options: SocketOptions) => net.Socket {
  let downUntil = 0;
  const events = { ready: () => (downUntil = 0), failed: () => (downUntil = Date.now() + openMs) };
  return (options) => {
    if (Date.now() >= downUntil) return watchedSocket(options, timeoutMs, events);
    const socket = new net.Socket();
    if (options.path) socket.connect(options.path);
    else socket.connect(options.port[0]!, options.host[0]!);
    // After postgres.js has attached its listeners (it awaits the factory).
    setImmediate(() =>
      socket.destroy(Object.assign(new Error('Postgres unreachable: a connection attempt failed moments ago'), { code: DATABASE_UNREACHABLE })),
    );
    return socket;
  };
}
