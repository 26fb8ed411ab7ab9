import { expect } from 'vitest';

/**
 * Walks a connect link's consent the way a browser does: the service's authorize step, the provider's
 * redirects (carrying its cookies), its consent page (Allow or Deny posted as the form does), and the
 * provider's redirect back to the service's callback, whose answer (a redirect to success_url or
 * error_url) is returned.
 */
export async function walkConsent(
  connectUrl: string,
  integration: string,
  options: { loginHint?: string; deny?: boolean; serviceBase: string },
): Promise<{ callback: string; final: URL; status: number }> {
  const jar = new Map<string, string>();
  const cookies = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      jar.set(pair!.slice(0, at).trim(), pair!.slice(at + 1));
    }
  };
  const start = await fetch(`${connectUrl}/authorize?integration=${encodeURIComponent(integration)}`, { redirect: 'manual' });
  expect(start.status, await start.clone().text()).toBe(302);
  let url = start.headers.get('location')!;
  if (options.loginHint) url += `&login_hint=${encodeURIComponent(options.loginHint)}`;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(options.serviceBase)) {
      const res = await fetch(url, { redirect: 'manual' });
      return { callback: url, status: res.status, final: new URL(res.headers.get('location') ?? url) };
    }
    let res = await fetch(url, { redirect: 'manual', headers: { cookie: cookies() } });
    keep(res);
    if (res.status === 200) {
      const page = await res.text();
      expect(page).toContain('Simulated provider');
      const action = options.deny ? 'abort' : 'confirm';
      res = await fetch(`${url.replace(/\?.*$/, '')}/${action}`, { method: 'POST', redirect: 'manual', headers: { cookie: cookies() } });
      keep(res);
    }
    expect([302, 303], `${url}: ${res.status}`).toContain(res.status);
    url = new URL(res.headers.get('location')!, url).href;
  }
  throw new Error('consent did not come back to the service');
}
