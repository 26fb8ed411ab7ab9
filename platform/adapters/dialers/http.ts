import { CallRejected } from './types';

// One bounded HTTP exchange with a provider's API, and what its failures mean for the dispatcher: a
// refusal of this one call is CallRejected (the attempt fails, unretried); a timeout, a dropped
// connection, 429, 5xx or a refused account (401/403: the operator's credentials, not the number) is a
// plain error, so the dial activity retries and nothing is dialed twice (the dialer keys on the attempt).

export interface ProviderResponse {
  status: number;
  body: unknown;
}

export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

/** Sends one request and reads its whole answer within `timeoutMs`; never throws for an HTTP status. */
export async function exchange(url: string, init: RequestInit, timeoutMs: number, what: string): Promise<ProviderResponse> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    text = await response.text();
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (error as Error).message;
    throw new ProviderError(`${what}: ${reason}`, null);
  }
  let body: unknown = text;
  if (text && /json/i.test(response.headers.get('content-type') ?? '')) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status: response.status, body };
}

/** Twilio's Basic authorization: the account SID and its auth token. */
export const twilioAuthorization = (accountSid: string, authToken: string): string =>
  `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;

/** A 4xx that concerns the request itself (not the account, the rate or the provider's health). */
export const isRequestRefusal = (status: number): boolean => status >= 400 && status < 500 && ![401, 403, 408, 409, 429].includes(status);

/** Throws for an unsuccessful answer: CallRejected when `reject` says the call itself was refused. */
export function expectOk(response: ProviderResponse, what: string, reject: (r: ProviderResponse) => string | null): void {
  if (response.status >= 200 && response.status < 300) return;
  const refusal = reject(response);
  if (refusal) throw new CallRejected(refusal);
  const detail = typeof response.body === 'string' ? response.body : JSON.stringify(response.body);
  throw new ProviderError(`${what} answered ${response.status}: ${detail.slice(0, 300)}`, response.status);
}

/** Runs `fn` over `items`, at most `limit` at once. */
export async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}
