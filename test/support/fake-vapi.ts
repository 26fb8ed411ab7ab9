import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { callHold } from './call-hold';
import { assistantProblems, knownVoice, voiceFailedReason } from './fake-vapi-assistant';

// A local stand-in for Vapi's API, faithful where the service depends on it: Bearer auth with the
// private API key; POST /call validated as Vapi does (an account phoneNumberId, customer.number in E.164,
// exactly one of assistant or assistantId, a transient assistant checked field by field as Vapi's
// class-validator checks it: fake-vapi-assistant.ts), with its error bodies ({message: [...], error,
// statusCode}); GET /call/{id} and the filtered list. Each call's server messages (status-update ringing,
// in-progress, ended, then the end-of-call-report with the recording, transcript and summary) go to the
// assistant's server URL with the server's `headers` (the `x-vapi-secret` among them), following the
// script of its number: answered, busy, no-answer, voicemail, failed, or lost (the end-of-call report and
// the last status update are never sent); an answered call whose voice the provider lacks ends with
// Vapi's voice-failed reason. `callTool` plays the model calling one of the assistant's function tools:
// a `tool-calls` message to the tool's server (else the assistant's), answered with the results.
// GET /phone-number lists the account's numbers as Vapi does (a JSON array; a SIP number has a sipUri and
// no number), `faults.numbers` makes it answer a 5xx or never answer; GET /phone-number/{id} reads one (404
// when the account has none of that id).

export type VapiScript = 'answered' | 'busy' | 'no-answer' | 'voicemail' | 'failed' | 'lost';

export interface FakeVapiCall {
  id: string;
  orgId: string;
  type: 'outboundPhoneCall';
  status: string;
  endedReason?: string;
  phoneNumberId: string;
  customer: { number: string };
  metadata: Record<string, unknown>;
  assistant: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  startedAt?: string;
  endedAt?: string;
  cost?: number;
  artifact?: { recordingUrl?: string; transcript?: string };
  analysis?: { summary?: string };
}

export interface FakeVapiPhoneNumber {
  id: string;
  orgId: string;
  provider: 'twilio' | 'vonage' | 'vapi' | 'telnyx' | 'byo-phone-number';
  number?: string;
  sipUri?: string;
  name?: string;
  status: 'active';
  createdAt: string;
  updatedAt: string;
}

export interface SentMessage {
  url: string;
  secret: string;
  body: string;
  answered: number;
}

const E164 = /^\+[1-9]\d{1,14}$/;
const ENDED: Record<VapiScript, string> = {
  answered: 'customer-ended-call',
  lost: 'assistant-ended-call',
  busy: 'customer-busy',
  'no-answer': 'customer-did-not-answer',
  voicemail: 'voicemail',
  failed: 'twilio-failed-to-connect-call',
};

export async function startFakeVapi(options: { stepMs?: number; script?: (to: string) => VapiScript } = {}) {
  let apiKey = crypto.randomUUID();
  const orgId = crypto.randomUUID();
  const phoneNumberId = crypto.randomUUID();
  const stepMs = options.stepMs ?? 50;
  const calls = new Map<string, FakeVapiCall>();
  const createsByNumber = new Map<string, number>();
  const bodies: Record<string, unknown>[] = [];
  const messages: SentMessage[] = [];
  const requests = { creates: 0, fetches: 0, lists: 0, unauthorized: 0, invalid: 0, numberLists: 0 };
  const stamp = new Date().toISOString();
  const phoneNumbers: FakeVapiPhoneNumber[] = [
    {
      id: phoneNumberId,
      orgId,
      provider: 'twilio',
      number: '+15005550006',
      name: 'Caller id',
      status: 'active',
      createdAt: stamp,
      updatedAt: stamp,
    },
  ];
  const faults: { numbers?: number | 'hang' } = {};
  const timers = new Set<NodeJS.Timeout>();
  let active = 0;
  let peak = 0;
  const gate = callHold();

  function error(res: http.ServerResponse, statusCode: number, message: string[] | string): void {
    res.writeHead(statusCode, { 'Content-Type': 'application/json' });
    const name = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found' }[statusCode] ?? 'Error';
    res.end(JSON.stringify({ message, error: name, statusCode }));
  }

  type Server = { url?: string; headers?: Record<string, string>; timeoutSeconds?: number };

  /** A request to a server as Vapi makes it: its headers, its timeout (20 s unless the server says). */
  async function post(server: Server, payload: Record<string, unknown>) {
    const body = JSON.stringify({ message: { timestamp: Date.now(), ...payload } });
    const headers = server.headers ?? {};
    const sent: SentMessage = { url: server.url!, secret: headers['x-vapi-secret'] ?? '', body, answered: 0 };
    messages.push(sent);
    try {
      const res = await fetch(transport(server.url!), {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body,
        signal: AbortSignal.timeout((server.timeoutSeconds ?? 20) * 1000),
      });
      sent.answered = res.status;
      const text = await res.text();
      let parsed: Record<string, unknown> = { text };
      try {
        parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {}
      return { status: res.status, body: parsed };
    } catch {
      sent.answered = -1;
      return { status: -1, body: {} };
    }
  }

  async function send(c: FakeVapiCall, message: Record<string, unknown>): Promise<void> {
    const server = c.assistant.server as Server | undefined;
    if (server?.url) await post(server, { call: c, ...message });
  }

  const voiceOf = (c: FakeVapiCall) => (c.assistant.voice ?? {}) as { provider?: string; voiceId?: string };

  function play(c: FakeVapiCall, script: VapiScript): void {
    const reached = script === 'answered' || script === 'lost';
    const steps: (() => void)[] = [
      () => {
        c.status = 'ringing';
        void send(c, { type: 'status-update', status: 'ringing' });
      },
    ];
    if (reached)
      steps.push(() => {
        c.status = 'in-progress';
        c.startedAt = new Date().toISOString();
        void send(c, { type: 'status-update', status: 'in-progress' });
      });
    const voice = voiceOf(c);
    const speaks = !voice.provider || knownVoice(voice.provider, voice.voiceId ?? '');
    steps.push(() => {
      c.status = 'ended';
      c.endedReason = reached && !speaks ? voiceFailedReason(voice.provider!) : ENDED[script];
      c.endedAt = new Date().toISOString();
      c.startedAt ??= c.endedAt;
      c.cost = 0.02;
      if (reached || script === 'voicemail') {
        c.artifact = {
          recordingUrl: `https://storage.vapi.example/${c.id}-mono.wav`,
          transcript: 'AI: Hello, this is Caller.\nUser: Hi, yes.',
        };
        c.analysis = { summary: 'The contact answered and agreed to a follow-up.' };
      }
      active--;
      if (script === 'lost') return;
      void send(c, { type: 'status-update', status: 'ended', endedReason: c.endedReason }).then(() =>
        send(c, {
          type: 'end-of-call-report',
          endedReason: c.endedReason,
          startedAt: c.startedAt,
          endedAt: c.endedAt,
          durationSeconds: (Date.parse(c.endedAt!) - Date.parse(c.startedAt!)) / 1000,
          cost: c.cost,
          artifact: c.artifact ?? {},
          analysis: c.analysis ?? {},
        }),
      );
    });
    // Each step schedules the next: timers of different lengths may fire out of order on a busy loop.
    const run = (i: number, released = false) => {
      const step = steps[i];
      if (!step) return;
      if (i === steps.length - 1 && !released && gate.stops(() => run(i, true))) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        c.updatedAt = new Date().toISOString();
        step();
        run(i + 1);
      }, stepMs);
      timers.add(timer);
    };
    run(0);
  }

  async function readJson(req: http.IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return undefined;
    }
  }

  /** Vapi's checks of a create, as messages. */
  function problems(body: Record<string, unknown>): string[] {
    const found: string[] = [];
    if (body.phoneNumberId !== phoneNumberId) found.push("Couldn't Get Phone Number. phoneNumberId must be a phone number of the org");
    const number = (body.customer as { number?: unknown } | undefined)?.number;
    if (typeof number !== 'string' || !E164.test(number)) found.push('customer.number must be a valid phone number in the E.164 format');
    const assistant = body.assistant as Record<string, unknown> | undefined;
    if (!!assistant === !!body.assistantId) found.push('Exactly one of assistant or assistantId must be given');
    if (assistant) found.push(...assistantProblems(assistant));
    if (body.metadata !== undefined && (typeof body.metadata !== 'object' || body.metadata === null))
      found.push('metadata must be an object');
    return found;
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      requests.unauthorized++;
      return error(res, 401, 'Invalid Key. Hot tip, you may be using the private key instead of the public key, or vice versa.');
    }
    if (req.method === 'POST' && url.pathname === '/call') {
      const body = await readJson(req);
      if (!body || typeof body !== 'object') return error(res, 400, ['body must be a JSON object']);
      const found = problems(body as Record<string, unknown>);
      if (found.length) {
        requests.invalid++;
        return error(res, 400, found);
      }
      const b = body as { customer: { number: string }; assistant: Record<string, unknown>; metadata?: Record<string, unknown> };
      bodies.push(b);
      requests.creates++;
      createsByNumber.set(b.customer.number, (createsByNumber.get(b.customer.number) ?? 0) + 1);
      const now = new Date().toISOString();
      const call: FakeVapiCall = {
        id: crypto.randomUUID(),
        orgId,
        type: 'outboundPhoneCall',
        status: 'queued',
        phoneNumberId,
        customer: b.customer,
        metadata: b.metadata ?? {},
        assistant: b.assistant,
        createdAt: now,
        updatedAt: now,
      };
      calls.set(call.id, call);
      active++;
      peak = Math.max(peak, active);
      play(call, options.script?.(b.customer.number) ?? 'answered');
      res.writeHead(201, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(call));
    }
    if (req.method === 'GET' && url.pathname === '/call') {
      requests.lists++;
      const since = url.searchParams.get('createdAtGe');
      const number = url.searchParams.get('phoneNumberId');
      const list = [...calls.values()]
        .filter((c) => (!since || c.createdAt >= since) && (!number || c.phoneNumberId === number))
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
        .slice(0, Number(url.searchParams.get('limit') ?? 100));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(list));
    }
    if (req.method === 'GET' && url.pathname === '/phone-number') {
      if (faults.numbers === 'hang') return;
      if (faults.numbers) return error(res, faults.numbers, 'Internal server error');
      requests.numberLists++;
      const list = [...phoneNumbers]
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
        .slice(0, Math.min(1000, Number(url.searchParams.get('limit') ?? 100)));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(list));
    }
    const number = /^\/phone-number\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && number) {
      const found = phoneNumbers.find((n) => n.id === number[1]);
      if (!found) return error(res, 404, 'Phone number not found');
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(found));
    }
    const one = /^\/call\/([0-9a-f-]{36})$/.exec(url.pathname);
    if (req.method === 'GET' && one) {
      requests.fetches++;
      const call = calls.get(one[1]!);
      if (!call) return error(res, 404, 'Call not found');
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(call));
    }
    return error(res, 404, `Cannot ${req.method} ${url.pathname}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  // The service signs and names its callback URLs with PUBLIC_BASE_URL (https, as a provider needs); the
  // fake delivers them to the test's local server, as a TLS proxy in front of the service would.
  let route: { from: string; to: string } | undefined;
  const transport = (url: string): string => (route && url.startsWith(route.from) ? route.to + url.slice(route.from.length) : url);

  return {
    /** Delivers callbacks addressed under `publicBase` (the service's PUBLIC_BASE_URL) to `localBase` instead. */
    reachAppAt(publicBase: string, localBase: string) {
      route = { from: publicBase.replace(/\/$/, ''), to: localBase.replace(/\/$/, '') };
    },
    url: `http://127.0.0.1:${port}`,
    get apiKey() {
      return apiKey;
    },
    /** A new private key (the old one is refused from now on). */
    rotateKey(): string {
      apiKey = crypto.randomUUID();
      return apiKey;
    },
    phoneNumberId,
    calls,
    bodies,
    messages,
    requests,
    createsByNumber,
    phoneNumbers,
    faults,
    /**
     * The model of call `callId` calls its function tool `name`: Vapi's `tool-calls` message to the tool's
     * server (else the assistant's), with the server's headers. Resolves to the server's answer.
     */
    async callTool(callId: string, name: string, args: Record<string, unknown>, id = `call_${crypto.randomUUID()}`) {
      const c = calls.get(callId);
      if (!c) throw new Error(`no call ${callId}`);
      const tools = ((c.assistant.model as { tools?: Record<string, unknown>[] }).tools ?? []) as {
        type: string;
        function?: { name: string };
        server?: Server;
      }[];
      const tool = tools.find((t) => t.type === 'function' && t.function?.name === name);
      if (!tool) throw new Error(`the assistant of ${callId} has no function tool ${name}`);
      const server = tool.server?.url ? tool.server : (c.assistant.server as Server);
      const toolCall = { id, type: 'function', function: { name, arguments: args } };
      return post(server, {
        type: 'tool-calls',
        call: c,
        assistant: c.assistant,
        toolCallList: [toolCall],
        toolWithToolCallList: [{ ...tool, toolCall }],
      });
    },
    /** Adds a number to the account (a SIP number when `number` starts with sip:). */
    addPhoneNumber(number: string, name?: string): FakeVapiPhoneNumber {
      const now = new Date().toISOString();
      const sip = number.startsWith('sip:');
      const n: FakeVapiPhoneNumber = {
        id: crypto.randomUUID(),
        orgId,
        provider: sip ? 'vapi' : 'twilio',
        ...(sip ? { sipUri: number } : { number }),
        name,
        status: 'active',
        createdAt: now,
        updatedAt: now,
      };
      phoneNumbers.push(n);
      return n;
    },
    hold: gate.hold,
    get held() {
      return gate.held;
    },
    release: gate.release,
    get active() {
      return active;
    },
    get peak() {
      return peak;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type FakeVapi = Awaited<ReturnType<typeof startFakeVapi>>;
