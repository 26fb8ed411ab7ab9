import { guardedRequest } from '../web/guarded-http';

/**
 * One HTTP request of a refresher, through the guarded client (`web/guarded-http.ts`): the URL and
 * every address it resolves to must be public (unless allowed for tests), redirects are not followed
 * (a token endpoint that redirects answers its 3xx, which the refresher refuses), one deadline covers
 * the exchange and a body over maxBytes is refused.
 */
export interface SafeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  url: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface SafeResponse {
  status: number;
  contentType: string;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface SafeHttpOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  maxBytes?: number;
}

export type SafeHttp = (request: SafeRequest) => Promise<SafeResponse>;

export function createSafeHttp(options: SafeHttpOptions): SafeHttp {
  return async (request) => {
    const response = await guardedRequest(request.url, {
      method: request.method,
      headers: { 'User-Agent': 'voice-crm-credential-refresher/1.0', Accept: 'application/json', ...request.headers },
      body: request.body,
      allowPrivate: options.allowPrivate,
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes ?? 1024 * 1024,
      oversize: 'refuse',
      wording: 'call',
    });
    const text = response.body.toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, contentType: response.contentType, text, json };
  };
}
