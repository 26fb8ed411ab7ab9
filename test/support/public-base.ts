import type { TestContext } from './context';

// Provider accounts need the service at a public https address (PUBLIC_BASE_URL): the service signs and names
// its callback URLs with it. Tests give it this one, and deliver what is addressed there to the local server,
// as a TLS proxy in front of the service would (the fakes: reachAppAt; the tests' own posts: appFetch).
export const PUBLIC_BASE_URL = 'https://voice-crm.example.test';

/** `fetch` for a URL under PUBLIC_BASE_URL, sent to the test's local server. */
export const appFetch =
  (ctx: Pick<TestContext, 'baseUrl'>) =>
  (url: string, init?: RequestInit): Promise<Response> =>
    fetch(url.startsWith(PUBLIC_BASE_URL) ? ctx.baseUrl + url.slice(PUBLIC_BASE_URL.length) : url, init);
