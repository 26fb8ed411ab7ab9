import type { Server } from 'node:http';
import type Koa from 'koa';

/**
 * Idle keep-alive connections outlive any client's or load balancer's idle timeout (typically 4-60 s),
 * so the client always closes first: a server closing an idle socket just as a client reuses it is
 * what turns a request into ECONNRESET. Headers must still arrive within a bound.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
const HEADERS_TIMEOUT_MS = 66_000;

/** The app listening on host:port, resolved once it accepts connections. */
export function listen(app: Koa, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, () => resolve(server));
    server.once('error', reject);
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    server.headersTimeout = HEADERS_TIMEOUT_MS;
  });
}
