import type postgres from 'postgres';
import { REQUEST_DEADLINE, currentRequestScope } from '../platform/core/request-scope';

// biome-ignore lint/suspicious/noExplicitAny: postgres.js's callable objects are typed per overload; the guard passes calls through untouched.
type Callable = (...args: any[]) => any;

/** What the guard relies on in a postgres.js query: it runs by calling its `handler`, and settles through `reject`. */
interface QueryInternals {
  handler: Callable & { debug?: unknown };
  reject(error: unknown): void;
}

const isQuery = (value: unknown): value is QueryInternals =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { handler?: unknown }).handler === 'function' &&
  typeof (value as { reject?: unknown }).reject === 'function';

const failure = (message: string, code: string) => Object.assign(new Error(message), { code });

/**
 * The pool as the service uses it, with two guards postgres.js (3.4.9) lacks:
 *
 * - A query a request makes after its deadline passed (api/middleware/deadlines.ts) is refused before
 *   it is sent: a handler still running after its 503 writes nothing more.
 * - A transaction whose connection closed under it (the server's idle limit, a request's deadline, a
 *   lost server) stays over. postgres.js rejects `begin` at once but lets the callback run on; what the
 *   callback sends next, and the COMMIT or ROLLBACK postgres.js sends once it ends, would go to the
 *   connection the pool has reopened: outside any transaction, into another request's transaction, or
 *   to a socket not open yet (which throws from a timer and ends the process). So its queries are
 *   refused, and the callback's end is never handed back to postgres.js.
 */
export function guardQueries(db: postgres.Sql): postgres.Sql {
  return wrap(db as unknown as Callable, () => false) as unknown as postgres.Sql;
}

function wrap(target: Callable, over: () => boolean): Callable {
  const guard = <T>(value: T): T => {
    if (!isQuery(value)) return value; // a fragment helper (identifier, values list)
    const handler = value.handler;
    value.handler = Object.assign(
      (query: unknown) => {
        if (over()) return value.reject(failure('The transaction is over: its connection was closed', 'TRANSACTION_OVER'));
        if (currentRequestScope()?.expired) return value.reject(failure('The request passed its deadline', REQUEST_DEADLINE));
        return handler(query);
      },
      { debug: handler.debug },
    );
    return value;
  };
  return new Proxy(target, {
    apply: (fn, self, args) => guard(Reflect.apply(fn, self, args)),
    get(fn, prop, receiver) {
      const value = Reflect.get(fn, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as Callable;
      if (prop === 'unsafe' || prop === 'file') return (...args: unknown[]) => guard(method.apply(fn, args));
      if (prop === 'begin') return (...args: unknown[]) => begin(method.bind(fn), args);
      if (prop === 'savepoint') {
        return (...args: unknown[]) => {
          const callback = args.pop() as Callable;
          return method.apply(fn, [...args, (sp: Callable) => callback(wrap(sp, over))]);
        };
      }
      return value;
    },
  });
}

function begin(original: Callable, args: unknown[]): Promise<unknown> {
  const callback = args.pop() as Callable;
  let over = false;
  const done = original(...args, (tx: Callable) => {
    let result: Promise<unknown>;
    try {
      const x = callback(wrap(tx, () => over));
      result = Array.isArray(x) ? Promise.all(x) : Promise.resolve(x);
    } catch (error) {
      result = Promise.reject(error);
    }
    // Past the transaction's end the callback's outcome is dropped: see guardQueries.
    return new Promise((resolve, reject) =>
      result.then(
        (value) => over || resolve(value),
        (error: unknown) => over || reject(error),
      ),
    );
  }) as Promise<unknown>;
  done.then(
    () => (over = true),
    () => (over = true),
  );
  return done;
}
