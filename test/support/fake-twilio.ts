import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A local stand-in for Twilio Programmable Voice (REST API 2010-04-01), faithful where the service
// depends on it: Basic auth with the account SID and auth token, Calls.json create with its required and
// validated fields (To/From E.164, Url|Twiml|ApplicationSid, StatusCallbackEvent, MachineDetection) and
// Twilio's error bodies ({code, message, more_info, status}); the call resource and the filtered list;
// status callbacks form-encoded and signed with X-Twilio-Signature (HMAC-SHA1 of URL + sorted params,
// written out here on its own, not taken from the service's code). Each call plays the sequence scripted
// for its number: answered, busy, no-answer, machine (voicemail), failed, lost (its final callback is
// never sent), reject (refused with 21211), drop (created, but the answer to the create is cut off).

export type TwilioScript = 'answered' | 'busy' | 'no-answer' | 'machine' | 'failed' | 'lost' | 'reject' | 'drop';

export interface FakeTwilioCall {
  sid: string;
  to: string;
  from: string;
  twiml: string;
  statusCallback: string | null;
  events: string[];
  machineDetection: string | null;
  status: string;
  answeredBy: string | null;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  duration: number | null;
}

export interface SentCallback {
  url: string;
  params: Record<string, string>;
  signature: string;
  answered: number;
}

const E164 = /^\+[1-9]\d{1,14}$/;
const EVENTS = new Set(['initiated', 'ringing', 'answered', 'completed']);

/** Twilio's request signature, computed as its documentation describes. */
export function signTwilio(authToken: string, url: string, params: Record<string, string>): string {
  let data = url;
  for (const name of Object.keys(params).sort()) data += name + params[name];
  return crypto.createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

const rfc2822 = (d: Date) => d.toUTCString().replace('GMT', '+0000');

export async function startFakeTwilio(options: { stepMs?: number; script?: (to: string) => TwilioScript } = {}) {
  const accountSid = `AC${crypto.randomBytes(16).toString('hex')}`;
  const authToken = crypto.randomBytes(16).toString('hex');
  const stepMs = options.stepMs ?? 50;
  const scripts = new Map<string, TwilioScript>();
  const calls = new Map<string, FakeTwilioCall>();
  /** Every create the fake accepted, by number. */
  const createsByNumber = new Map<string, number>();
  const callbacks: SentCallback[] = [];
  const requests = { creates: 0, fetches: 0, lists: 0, unauthorized: 0, invalid: 0 };
  let active = 0;
  let peak = 0;
  const timers = new Set<NodeJS.Timeout>();
  const scriptOf = (to: string): TwilioScript => scripts.get(to) ?? options.script?.(to) ?? 'answered';

  function error(res: http.ServerResponse, status: number, code: number, message: string): void {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }));
  }

  const resource = (c: FakeTwilioCall) => ({
    sid: c.sid,
    account_sid: accountSid,
    to: c.to,
    from: c.from,
    status: c.status,
    direction: 'outbound-api',
    answered_by: c.answeredBy,
    duration: c.duration === null ? null : String(c.duration),
    date_created: rfc2822(c.createdAt),
    date_updated: rfc2822(new Date()),
    start_time: c.startedAt ? rfc2822(c.startedAt) : null,
    end_time: c.endedAt ? rfc2822(c.endedAt) : null,
    api_version: '2010-04-01',
    uri: `/2010-04-01/Accounts/${accountSid}/Calls/${c.sid}.json`,
  });

  async function sendCallback(c: FakeTwilioCall, event: string, sequence: number): Promise<void> {
    if (!c.statusCallback || (event !== 'completed' && !c.events.includes(event))) return;
    const params: Record<string, string> = {
      AccountSid: accountSid,
      ApiVersion: '2010-04-01',
      CallSid: c.sid,
      CallStatus: c.status,
      Called: c.to,
      Caller: c.from,
      CallbackSource: 'call-progress-events',
      Direction: 'outbound-api',
      From: c.from,
      SequenceNumber: String(sequence),
      Timestamp: rfc2822(new Date()),
      To: c.to,
    };
    if (c.answeredBy) params.AnsweredBy = c.answeredBy;
    if (event === 'completed') {
      params.CallDuration = String(c.duration ?? 0);
      params.Duration = String(Math.ceil((c.duration ?? 0) / 60));
    }
    const signature = signTwilio(authToken, c.statusCallback, params);
    const sent: SentCallback = { url: c.statusCallback, params, signature, answered: 0 };
    callbacks.push(sent);
    try {
      const res = await fetch(c.statusCallback, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signature, 'User-Agent': 'TwilioProxy/1.1' },
        body: new URLSearchParams(params).toString(),
        signal: AbortSignal.timeout(10_000),
      });
      sent.answered = res.status;
      await res.arrayBuffer();
    } catch {
      sent.answered = -1;
    }
  }

  /** Plays the call's scripted sequence: status changes, each followed by its callback. */
  function play(c: FakeTwilioCall, script: TwilioScript): void {
    const steps: { status: string; event: string; answeredBy?: string; final?: boolean; silent?: boolean }[] = [
      { status: 'initiated', event: 'initiated' },
    ];
    if (script !== 'failed') steps.push({ status: 'ringing', event: 'ringing' });
    if (script === 'answered' || script === 'drop' || script === 'lost')
      steps.push({ status: 'in-progress', event: 'answered', answeredBy: c.machineDetection ? 'human' : undefined });
    if (script === 'machine') steps.push({ status: 'in-progress', event: 'answered', answeredBy: 'machine_start' });
    const final = {
      answered: 'completed',
      drop: 'completed',
      lost: 'completed',
      machine: 'completed',
      busy: 'busy',
      'no-answer': 'no-answer',
      failed: 'failed',
      reject: 'failed',
    }[script];
    steps.push({ status: final, event: 'completed', final: true, silent: script === 'lost' });
    // Each step schedules the next: timers of different lengths may fire out of order on a busy loop.
    const run = (i: number) => {
      const step = steps[i];
      if (!step) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        c.status = step.status;
        if (step.answeredBy) c.answeredBy = step.answeredBy;
        if (step.status === 'in-progress') c.startedAt = new Date();
        if (step.final) {
          c.endedAt = new Date();
          c.duration = c.startedAt ? Math.max(1, Math.round((c.endedAt.getTime() - c.startedAt.getTime()) / 1000)) : 0;
          active--;
        }
        if (!step.silent) void sendCallback(c, step.event, i);
        run(i + 1);
      }, stepMs);
      timers.add(timer);
    };
    // A dropped answer's call starts late, so the caller's next try comes before its first callback.
    if (script === 'drop') {
      const timer = setTimeout(() => {
        timers.delete(timer);
        run(0);
      }, stepMs * 20);
      timers.add(timer);
    } else run(0);
  }

  async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const auth = req.headers.authorization ?? '';
    const [user, pass] = Buffer.from(auth.replace(/^Basic /, ''), 'base64')
      .toString()
      .split(':');
    const base = `/2010-04-01/Accounts/${accountSid}`;
    if (!auth.startsWith('Basic ') || user !== accountSid || pass !== authToken || !url.pathname.startsWith(base)) {
      requests.unauthorized++;
      return error(res, 401, 20003, 'Authenticate');
    }
    const path = url.pathname.slice(base.length);
    if (req.method === 'POST' && path === '/Calls.json') {
      if (!/^application\/x-www-form-urlencoded/.test(req.headers['content-type'] ?? ''))
        return error(res, 400, 20001, 'Invalid content type');
      const form = await readForm(req);
      const to = form.get('To');
      const from = form.get('From');
      const invalid = (code: number, message: string) => {
        requests.invalid++;
        error(res, 400, code, message);
      };
      if (!to) return invalid(21201, "No 'To' number is specified");
      if (!from) return invalid(21213, "No 'From' number is specified");
      if (!E164.test(to)) return invalid(21211, `Invalid 'To' Phone Number: ${to}`);
      if (!E164.test(from)) return invalid(21212, `Invalid 'From' Phone Number: ${from}`);
      if (!form.get('Url') && !form.get('Twiml') && !form.get('ApplicationSid')) return invalid(21205, 'Url parameter is required');
      const twiml = form.get('Twiml') ?? '';
      if (twiml && !/<Response>[\s\S]*<\/Response>/.test(twiml)) return invalid(12100, 'Document parse failure');
      const events = form
        .getAll('StatusCallbackEvent')
        .flatMap((e) => e.split(/\s+/))
        .filter(Boolean);
      if (events.some((e) => !EVENTS.has(e))) return invalid(21626, 'Invalid StatusCallbackEvent');
      const amd = form.get('MachineDetection');
      if (amd && amd !== 'Enable' && amd !== 'DetectMessageEnd') return invalid(21629, 'Invalid MachineDetection');
      const callback = form.get('StatusCallback');
      if (callback && !/^https?:\/\//.test(callback)) return invalid(21609, 'Invalid StatusCallback URL');
      const script = scriptOf(to);
      if (script === 'reject') return invalid(21211, `Invalid 'To' Phone Number: ${to}`);
      requests.creates++;
      createsByNumber.set(to, (createsByNumber.get(to) ?? 0) + 1);
      const call: FakeTwilioCall = {
        sid: `CA${crypto.randomBytes(16).toString('hex')}`,
        to,
        from,
        twiml,
        statusCallback: callback,
        events,
        machineDetection: amd,
        status: 'queued',
        answeredBy: null,
        createdAt: new Date(),
        startedAt: null,
        endedAt: null,
        duration: null,
      };
      calls.set(call.sid, call);
      active++;
      peak = Math.max(peak, active);
      play(call, script);
      // A dropped answer: the call exists, the caller never hears so (its next try must find it).
      if (script === 'drop' && createsByNumber.get(to) === 1) return req.socket.destroy();
      res.writeHead(201, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(resource(call)));
    }
    if (req.method === 'GET' && path === '/Calls.json') {
      requests.lists++;
      const to = url.searchParams.get('To');
      const from = url.searchParams.get('From');
      const list = [...calls.values()]
        .filter((c) => (!to || c.to === to) && (!from || c.from === from))
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
        .slice(0, Number(url.searchParams.get('PageSize') ?? 50));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify({ calls: list.map(resource), page: 0, page_size: list.length }));
    }
    const fetchMatch = /^\/Calls\/(CA[0-9a-f]{32})\.json$/.exec(path);
    if (req.method === 'GET' && fetchMatch) {
      requests.fetches++;
      const call = calls.get(fetchMatch[1]!);
      if (!call) return error(res, 404, 20404, 'The requested resource was not found');
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(resource(call)));
    }
    return error(res, 404, 20404, 'The requested resource was not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    calls,
    callbacks,
    requests,
    createsByNumber,
    get peak() {
      return peak;
    },
    get active() {
      return active;
    },
    script(number: string, script: TwilioScript) {
      scripts.set(number, script);
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type FakeTwilio = Awaited<ReturnType<typeof startFakeTwilio>>;
