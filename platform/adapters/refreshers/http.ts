import type dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, parseTarget, WebFetchError } from '../web/fetch';

type AllowPrivate = (address: string) => boolean;

/**
 * One HTTP request of a refresher, through the safe fetcher's checks: the URL and every address it
 * resolves to must be public (unless allowed for tests), redirects are not followed (a token endpoint
 * that redirects is refused), and time and size are capped.
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
  const allow: AllowPrivate = () => options.allowPrivate;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return (request) =>
    new Promise((resolve, reject) => {
      let url: URL;
      try {
        url = parseTarget(request.url, allow);
      } catch (error) {
        return reject(error);
      }
      const send = url.protocol === 'https:' ? https.request : http.request;
      const req = send(
        url,
        {
          method: request.method,
          lookup: guardedLookup(allow) as unknown as typeof dns.lookup,
          headers: { 'User-Agent': 'voice-crm-credential-refresher/1.0', Accept: 'application/json', ...request.headers },
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBytes) return fail(new WebFetchError('network', `Response from ${url.origin} larger than ${maxBytes} bytes`));
            chunks.push(chunk);
          });
          res.on('error', (e) => fail(e));
          res.on('end', () => {
            clearTimeout(timer);
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text, json });
          });
        },
      );
      const fail = (e: unknown) => {
        clearTimeout(timer);
        req.destroy();
        if (e instanceof WebFetchError) return reject(e);
        const cause = (e as { cause?: unknown }).cause;
        if (cause instanceof WebFetchError) return reject(cause);
        reject(new WebFetchError('network', `Cannot reach ${url.origin}: ${(e as Error).message}`, true));
      };
      const timer = setTimeout(() => fail(new WebFetchError('timeout', `Timed out calling ${url.origin}`, true)), options.timeoutMs);
      req.on('error', fail);
      req.end(request.body);
    });
}
