/** The bound of `within` passed before the work settled. */
export class DeadlineExceeded extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/** The work's outcome, or DeadlineExceeded once `ms` pass (the work itself is left to settle on its own). */
export async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new DeadlineExceeded(ms)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
