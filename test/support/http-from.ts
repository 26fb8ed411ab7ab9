import http from 'node:http';
import type { HttpResponse, RequestOptions } from './http';

/**
 * Like httpClient, but the connection leaves from `localAddress` (any 127.x.y.z on Linux loopback), so
 * the app sees a client address of the test's choosing at the socket, not in a header it may distrust.
 */
export function httpClientFrom(baseUrl: string, localAddress: string) {
  return function request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.Authorization = `Bearer ${options.token}`;
    if (options.org) headers['X-Service-Org'] = options.org;
    let body: string | Buffer | undefined = options.rawBody;
    if (body === undefined && options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] ??= 'application/json';
    }
    return new Promise((resolve, reject) => {
      const req = http.request(new URL(path, baseUrl), { method, headers, localAddress, agent: false, timeout: 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of [value ?? []].flat()) responseHeaders.append(name, v);
          }
          let parsed: unknown = text;
          if ((res.headers['content-type'] ?? '').includes('json') && text) parsed = JSON.parse(text);
          resolve({ status: res.statusCode!, body: parsed as T, text, headers: responseHeaders });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(body);
    });
  };
}
