export interface HttpResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as is, without JSON encoding. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  org?: string;
}

export const BROWSER_USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36';

/** A small fetch wrapper against a running app: JSON in, JSON (or text) out. */
export function httpClient(baseUrl: string) {
  return async function request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    // A browser's User-Agent: share-link views from known bots (and bare HTTP libraries) are not counted.
    const headers: Record<string, string> = { 'User-Agent': BROWSER_USER_AGENT, ...options.headers };
    if (options.token) headers.Authorization = `Bearer ${options.token}`;
    if (options.org) headers['X-Service-Org'] = options.org;
    let body: string | Buffer | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: response.status, body: parsed as T, text, headers: response.headers };
  };
}

export type Request = ReturnType<typeof httpClient>;
