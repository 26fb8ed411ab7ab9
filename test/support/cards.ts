import http from 'node:http';
import QRCode from 'qrcode';
import type { TestContext } from './context';
import type { Tenant } from './identity';

export async function createCard(ctx: TestContext, tenant: Tenant, body: Record<string, unknown> = {}) {
  const res = await ctx.request('POST', '/cards', { token: tenant.session, body: { name: 'Ada Lovelace', ...body } });
  if (res.status !== 200) throw new Error(`card create failed: ${res.status} ${res.text}`);
  return res.body as Record<string, any>;
}

export async function createShareLink(ctx: TestContext, tenant: Tenant, cardId: string, body: Record<string, unknown> = {}) {
  const res = await ctx.request('POST', `/cards/${cardId}/share-links`, { token: tenant.session, body });
  if (res.status !== 200) throw new Error(`share link create failed: ${res.status} ${res.text}`);
  return res.body as Record<string, any>;
}

/** A real PNG (a QR code of `text`), of about `width` pixels. */
export const pngBytes = (text = 'card', width = 64): Promise<Buffer> => QRCode.toBuffer(text, { type: 'png', width });

export async function uploadImage(ctx: TestContext, tenant: Tenant, cardId: string, bytes: Buffer, contentType = 'image/png') {
  const response = await fetch(`${ctx.baseUrl}/cards/${cardId}/media`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${tenant.session}`, 'Content-Type': contentType },
    body: bytes,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/**
 * A GET whose path goes out exactly as written (fetch and URL would resolve `..` and re-encode), for
 * path traversal attempts.
 */
export function rawGet(baseUrl: string, path: string): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method: 'GET', path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}
