import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeVapi, FakeVapiPhoneNumber } from './fake-vapi';

// Vapi's inbound side, in front of the Vapi fake (what it does not serve goes on to the fake unchanged):
// a phone number updated (`PATCH /phone-number/{id}`: assistantId, squadId, workflowId, server {url,
// headers, timeoutSeconds}, name, validated as Vapi does, 404 for an unknown id), a SIP number made
// (`POST /phone-number` with provider `vapi`, `sipUri` sip:<user>@sip.vapi.ai, unique, and `authentication`
// {username, password} of 20 to 40 characters each) and deleted. `assistantRequest` plays Vapi asking a
// number's server URL for the assistant of a call to it, with the server's headers.

export type InboundVapiNumber = FakeVapiPhoneNumber & {
  assistantId?: string | null;
  squadId?: string | null;
  workflowId?: string | null;
  server?: { url: string; headers?: Record<string, string>; timeoutSeconds?: number } | null;
  authentication?: { username: string; password: string };
};

export async function startVapiInbound(fake: FakeVapi, options: { transport?: (url: string) => string } = {}) {
  const transport = options.transport ?? ((u: string) => u);
  const faults: { updateNumber?: number | 'hang' } = {};
  const requests = { updates: 0, sipCreates: 0, deletes: 0 };
  const numbers = fake.phoneNumbers as InboundVapiNumber[];

  function error(res: http.ServerResponse, statusCode: number, message: string[] | string): void {
    res.writeHead(statusCode, { 'Content-Type': 'application/json' });
    const name = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found' }[statusCode] ?? 'Error';
    res.end(JSON.stringify({ message, error: name, statusCode }));
  }
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  /** Vapi's checks of the inbound fields of a create or update. */
  function problems(body: Record<string, unknown>): string[] {
    const found: string[] = [];
    for (const f of ['assistantId', 'squadId', 'workflowId'])
      if (body[f] !== undefined && body[f] !== null && typeof body[f] !== 'string') found.push(`${f} must be a string`);
    const server = body.server as Record<string, unknown> | null | undefined;
    if (server !== undefined && server !== null) {
      if (typeof server !== 'object' || typeof server.url !== 'string' || !/^https?:\/\//.test(server.url))
        found.push('server.url must be a URL address');
      if (server.headers !== undefined && (typeof server.headers !== 'object' || server.headers === null))
        found.push('server.headers must be an object');
    }
    if (body.name !== undefined && (typeof body.name !== 'string' || body.name.length > 40))
      found.push('name must be shorter than or equal to 40 characters');
    return found;
  }

  async function forward(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): Promise<void> {
    try {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      const upstream = await fetch(`${fake.url}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
        signal: AbortSignal.timeout(30_000),
      });
      res.writeHead(upstream.status, { 'Content-Type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    } catch {
      res.destroy();
    }
  }

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://fake');
    const one = /^\/phone-number\/([^/]+)$/.exec(url.pathname);
    const mine =
      (req.method === 'PATCH' || req.method === 'DELETE') && one ? true : req.method === 'POST' && url.pathname === '/phone-number';
    if (!mine) return forward(req, res, raw);
    if (req.headers.authorization !== `Bearer ${fake.apiKey}`) return error(res, 401, 'Invalid Key.');
    let body: Record<string, unknown> = {};
    if (req.method !== 'DELETE') {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return error(res, 400, ['body must be a JSON object']);
      }
      if (!body || typeof body !== 'object' || Array.isArray(body)) return error(res, 400, ['body must be a JSON object']);
    }
    if (req.method === 'POST') {
      const found = problems(body);
      if (body.provider !== 'vapi') found.push('provider must be one of: twilio, vonage, vapi, telnyx, byo-phone-number');
      const sipUri = body.sipUri;
      if (typeof sipUri !== 'string' || !/^sip:[A-Za-z0-9._-]+@sip(\.eu)?\.vapi\.ai$/.test(sipUri))
        found.push('sipUri must be a valid SIP URI of the form sip:username@sip.vapi.ai');
      const auth = body.authentication as { username?: unknown; password?: unknown } | undefined;
      if (auth !== undefined)
        for (const f of ['username', 'password'] as const) {
          const v = auth?.[f];
          if (typeof v !== 'string' || v.length < 20 || v.length > 40) found.push(`authentication.${f} must be 20 to 40 characters`);
        }
      if (found.length) return error(res, 400, found);
      if (numbers.some((n) => n.sipUri?.toLowerCase() === (sipUri as string).toLowerCase()))
        return error(res, 400, 'This SIP URI is already in use.');
      requests.sipCreates++;
      const now = new Date().toISOString();
      const n: InboundVapiNumber = {
        id: crypto.randomUUID(),
        orgId: numbers[0]?.orgId ?? crypto.randomUUID(),
        provider: 'vapi',
        sipUri: sipUri as string,
        name: body.name as string | undefined,
        status: 'active',
        createdAt: now,
        updatedAt: now,
        assistantId: (body.assistantId as string | undefined) ?? null,
        server: (body.server as InboundVapiNumber['server']) ?? null,
        authentication: auth as InboundVapiNumber['authentication'],
      };
      numbers.push(n);
      const { authentication: _secret, ...shown } = n;
      return json(res, 201, shown);
    }
    const index = numbers.findIndex((n) => n.id === one![1]);
    if (index < 0) return error(res, 404, 'Phone number not found');
    const n = numbers[index]!;
    if (req.method === 'DELETE') {
      numbers.splice(index, 1);
      requests.deletes++;
      return json(res, 200, n);
    }
    if (faults.updateNumber === 'hang') return;
    if (faults.updateNumber) return error(res, faults.updateNumber, 'Internal server error');
    const found = problems(body);
    if (found.length) return error(res, 400, found);
    requests.updates++;
    for (const f of ['assistantId', 'squadId', 'workflowId', 'server', 'name'] as const)
      if (f in body) (n as unknown as Record<string, unknown>)[f] = body[f];
    n.updatedAt = new Date().toISOString();
    return json(res, 200, n);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    numbers,
    faults,
    requests,
    /** Vapi asking the number's server for the assistant of a call to it (as for a call to a SIP number too). */
    async assistantRequest(numberId: string, options: { secret?: string } = {}) {
      const n = numbers.find((x) => x.id === numberId);
      if (!n?.server?.url) throw new Error(`number ${numberId} has no server URL`);
      const { authentication: _secret, ...phoneNumber } = n;
      const call = { id: crypto.randomUUID(), orgId: n.orgId, type: 'inboundPhoneCall', phoneNumberId: n.id, status: 'ringing' };
      const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(n.server.headers ?? {}) };
      if (options.secret !== undefined) headers['x-vapi-secret'] = options.secret;
      const res = await fetch(transport(n.server.url), {
        method: 'POST',
        headers,
        body: JSON.stringify({
          message: { type: 'assistant-request', timestamp: Date.now(), call, phoneNumber, customer: { number: '+14155550142' } },
        }),
        signal: AbortSignal.timeout(10_000),
      });
      return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, any> | null };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type VapiInbound = Awaited<ReturnType<typeof startVapiInbound>>;
