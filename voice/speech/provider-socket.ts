import WebSocket from 'ws';

// A provider's WebSocket opened within a bound; a handshake the provider refuses for the key (401/403) is
// told apart from one that fails, so the key's connection can be marked for a new one.

/** The provider refused the organization's key. */
export class ProviderKeyRefused extends Error {}

export function openProviderSocket(url: string, headers: Record<string, string>, timeoutMs: number, what: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers, handshakeTimeout: timeoutMs, maxPayload: 16 * 1024 * 1024 });
    socket.once('unexpected-response', (request, response) => {
      const status = response.statusCode ?? 0;
      request.destroy();
      reject(
        status === 401 || status === 403
          ? new ProviderKeyRefused(`${what} refused the key (${status})`)
          : new Error(`${what} answered ${status} to the connection`),
      );
    });
    socket.on('error', (error) =>
      reject(new Error(/timed out/i.test(error.message) ? `${what} did not connect within ${timeoutMs} ms` : `${what}: ${error.message}`)),
    );
    socket.once('open', () => resolve(socket));
  });
}

/** Base64 text of a provider's message as bytes. */
export const fromBase64 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64'));

/** A provider's WebSocket address from its HTTP(S) base URL. */
export const wsBase = (httpBase: string): string => httpBase.replace(/\/+$/, '').replace(/^http/, 'ws');
