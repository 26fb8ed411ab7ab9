/**
 * `fn(value)`, at once when `value` is not a promise, else once it settles. An `await` costs a promise
 * even on a value that is ready, and on Node 20 the request scope's async hooks tax every promise, so the
 * request path waits only where something does (docs/performance.md, GET /me).
 */
export function andThen<T, R>(value: T | Promise<T>, fn: (value: T) => R): R | Promise<Awaited<R>> {
  return value instanceof Promise ? (value.then(fn) as Promise<Awaited<R>>) : fn(value);
}
