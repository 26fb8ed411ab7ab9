import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakePage {
  status?: number;
  contentType?: string;
  body?: string | Buffer;
  /** Sent as the Location header (with a 302 unless status says otherwise). */
  redirect?: string;
  /** Wait this long before answering. */
  delayMs?: number;
}

/** A company website served on 127.0.0.1 for scaffolding and web-fetch tests; pages by path. */
export interface FakeWebsite {
  origin: string;
  url(path: string): string;
  pages: Map<string, FakePage>;
  /** Paths requested, in order. */
  hits: string[];
  close(): Promise<void>;
}

export const COMPANY_PAGE = `<!doctype html>
<html><head>
  <title>Acme Plumbing | 24/7 emergency plumbers</title>
  <meta name="description" content="Acme Plumbing fixes leaks, boilers and drains across Springfield, day and night.">
  <style>body { color: red }</style>
  <script>var tracking = "do not extract me";</script>
</head><body>
  <nav>Home | Services</nav>
  <main>
    <h1>Emergency plumbing in Springfield</h1>
    <p>We answer in under an hour &amp; charge no call-out fee.</p>
    <h2>Boiler repair</h2>
    <p>Gas Safe engineers service every make of boiler.</p>
    <h3>Call us: +1 415 555 0100</h3>
  </main>
</body></html>`;

export async function startFakeWebsite(pages: Record<string, FakePage> = { '/': { body: COMPANY_PAGE } }): Promise<FakeWebsite> {
  const site: FakeWebsite = {
    origin: '',
    url: (path) => `${site.origin}${path}`,
    pages: new Map(Object.entries(pages)),
    hits: [],
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    site.hits.push(path);
    const page = site.pages.get(path);
    if (!page) {
      res.writeHead(404, { 'Content-Type': 'text/html' }).end('<h1>Not found</h1>');
      return;
    }
    if (page.delayMs) await new Promise((r) => setTimeout(r, page.delayMs));
    if (page.redirect) {
      res.writeHead(page.status ?? 302, { Location: page.redirect }).end();
      return;
    }
    res.writeHead(page.status ?? 200, { 'Content-Type': page.contentType ?? 'text/html; charset=utf-8' });
    res.end(page.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  site.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return site;
}
