import type net from 'node:net';
import { currentRequestScope, type Held, type RequestScope } from './request-scope';

/** How one pool's connections are used: what `/health` reports. */
export interface PoolUsage {
  max: number;
  /** Connections open and watched (plain TCP; over TLS the protocol is opaque and nothing is counted). */
  open: number;
  /** Connections with a statement running or a transaction open. */
  busy: number;
  /** How long every connection of the pool has been busy without a break; 0 while one is free. */
  exhaustedMs: number;
}

/** What the watchdog (platform/core/postgres-watchdog.ts) tells about each connection it reads. */
export interface ConnectionUsage {
  opened(socket: net.Socket): void;
  wrote(socket: net.Socket): void;
  busy(socket: net.Socket, busy: boolean): void;
  closed(socket: net.Socket): void;
}

interface Connection extends Held {
  busySince: number | null;
  owner: RequestScope | null;
}

/**
 * The connections of one pool. A busy connection belongs to the request that last wrote to it (the
 * request's async context, platform/core/request-scope.ts) until it is free again; when that request passes
 * its deadline the connection is closed, the server rolls back what it had open and the pool opens a
 * new one, so a request that never finishes cannot keep a pool slot.
 */
export class PoolMonitor implements ConnectionUsage {
  private readonly connections = new Map<net.Socket, Connection>();

  constructor(readonly max: number) {}

  opened(socket: net.Socket): void {
    const connection: Connection = {
      busySince: null,
      owner: null,
      release: (reason) => {
        if (connection.busySince !== null) socket.destroy(reason);
      },
    };
    this.connections.set(socket, connection);
  }

  wrote(socket: net.Socket): void {
    const connection = this.connections.get(socket);
    const scope = currentRequestScope();
    // An answered request owns nothing: work it left running (a notification kick) is not its to lose,
    // and past its deadline db/query-guard.ts sends none of its queries (postgres.js's own ROLLBACK aside).
    if (!connection || !scope || scope.ended || connection.owner === scope) return;
    this.disown(connection);
    connection.owner = scope;
    scope.hold(connection);
  }

  busy(socket: net.Socket, busy: boolean): void {
    const connection = this.connections.get(socket);
    if (!connection) return;
    connection.busySince = busy ? (connection.busySince ?? Date.now()) : null;
    if (!busy) this.disown(connection);
  }

  closed(socket: net.Socket): void {
    const connection = this.connections.get(socket);
    if (!connection) return;
    this.disown(connection);
    this.connections.delete(socket);
  }

  usage(now = Date.now()): PoolUsage {
    const since = [...this.connections.values()].flatMap((c) => (c.busySince === null ? [] : [c.busySince]));
    const exhaustedMs = since.length >= this.max ? now - Math.max(...since) : 0;
    return { max: this.max, open: this.connections.size, busy: since.length, exhaustedMs };
  }

  private disown(connection: Connection): void {
    connection.owner?.letGo(connection);
    connection.owner = null;
  }
}

const monitors = new WeakMap<object, PoolMonitor>();

/** Remembers the monitor of a pool (the postgres.js `sql` object), for readers such as `/health`. */
export const registerPoolMonitor = (pool: object, monitor: PoolMonitor): void => void monitors.set(pool, monitor);

/** The monitor of a pool made by db/client.ts `createSql`; undefined for any other. */
export const poolMonitorOf = (pool: object): PoolMonitor | undefined => monitors.get(pool);
