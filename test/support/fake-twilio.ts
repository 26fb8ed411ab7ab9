import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { callHold } from './call-hold';
import { parseTwiml, type TwimlVerb } from './twiml';

// A local stand-in for Twilio Programmable Voice (REST API 2010-04-01), faithful where the service
// depends on it: Basic auth with the account SID and auth token, Calls.json create with its required and
// validated fields (To/From E.164, Url|Twiml|ApplicationSid, StatusCallbackEvent, MachineDetection) and
// Twilio's error bodies ({code, message, more_info, status}); the call resource and the filtered list;
// status callbacks form-encoded and signed with X-Twilio-Signature (HMAC-SHA1 of URL + sorted params,
// written out here on its own, not taken from the service's code). Each call plays the sequence scripted
// for its number: answered, busy, no-answer, machine (voicemail), failed, lost (its final callback is
// never sent), reject (refused with 21211), drop (created, but the answer to the create is cut off).
// The account's inventory too: IncomingPhoneNumbers.json (paged as Twilio pages: PageSize, Page,
// PageToken, next_page_uri relative to the API's host) and SIP domains (create form-encoded with a
// DomainName ending in .sip.twilio.com, unique; list; delete, 404 for an unknown sid), with `faults`
// to make either answer a 5xx or never answer; `callSipDomain` plays Twilio asking the domain's
// VoiceUrl for TwiML, signed as Twilio signs it. More accounts than the first (`addAccount`), each with its
// own auth token (rotatable: the old one is refused at once), calls, numbers and domains, and the account
// resource (`GET /2010-04-01/Accounts/{sid}.json`).
// Live calls for the voice runtime: a call that stays in progress (script `live`, or `addInboundCall` for a
// call Twilio received), updated as Twilio updates one (`POST .../Calls/{CallSid}.json` with `Twiml` or `Url`
// to run new instructions, `Status=completed` to hang up, `canceled` for one not yet answered; 21220 for a
// call already over), every update kept in `updates` with its TwiML read (`verbs`, `dial`) so a test asserts a
// cold or warm transfer or a hang-up. A Media Stream attached to the call (`attachStream`) is stopped
// when its instructions are replaced or the call ends, as Twilio stops a <Connect><Stream>.

export type TwilioScript = 'answered' | 'busy' | 'no-answer' | 'machine' | 'failed' | 'lost' | 'reject' | 'drop';
/** A dialer's scripts, and `live`: answered, then in progress until hung up (the voice runtime's calls). */
export type TwilioCallScript = TwilioScript | 'live';

export interface FakeTwilioCall {
  sid: string;
  accountSid: string;
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
  /** 'outbound-api' for a call made through Calls.json (the default), 'inbound' for addInboundCall's. */
  direction?: 'outbound-api' | 'inbound';
  /** The instructions' URL (Url of the create or of the last update). */
  url?: string | null;
  /** `AsyncAmdStatusCallback` of a call made with `AsyncAmd=true`: the verdict goes there, not in the status callbacks. */
  asyncAmdCallback?: string | null;
}

/** One update of a live call through the REST API, as the fake answered it. */
export interface CallUpdate {
  callSid: string;
  accountSid: string;
  at: Date;
  twiml: string | null;
  url: string | null;
  method: string | null;
  status: string | null;
  /** The TwiML's verbs (of Twiml; none for a Url). */
  verbs: TwimlVerb[];
  /** The first <Dial> of the TwiML: a transfer. */
  dial: TwimlVerb | null;
  /** HTTP status the fake answered. */
  answered: number;
}

/** What the fake stops when a call's stream ends (a SimulatedCaller's hangUp sends `stop` and closes, as Twilio does). */
export interface AttachedStream {
  hangUp(): Promise<unknown>;
}

export interface FakeTwilioNumber {
  sid: string;
  phoneNumber: string;
  friendlyName: string;
}

export interface FakeSipDomain {
  sid: string;
  accountSid: string;
  domainName: string;
  friendlyName: string | null;
  voiceUrl: string | null;
  voiceMethod: string;
  createdAt: Date;
}

/** A status to answer instead of the real one, or 'hang' to never answer. */
export type TwilioFault = number | 'hang' | undefined;

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

export async function startFakeTwilio(options: { stepMs?: number; script?: (to: string) => TwilioCallScript } = {}) {
  const accountSid = `AC${crypto.randomBytes(16).toString('hex')}`;
  const newToken = () => crypto.randomBytes(16).toString('hex');
  const accounts = new Map<string, { token: string; friendlyName: string; status: string; numbers: FakeTwilioNumber[] }>();
  const tokenOf = (sid: string) => accounts.get(sid)!.token;
  const stepMs = options.stepMs ?? 50;
  const scripts = new Map<string, TwilioCallScript>();
  const calls = new Map<string, FakeTwilioCall>();
  /** Every create the fake accepted, by number. */
  const createsByNumber = new Map<string, number>();
  const callbacks: SentCallback[] = [];
  const requests = {
    creates: 0,
    fetches: 0,
    lists: 0,
    unauthorized: 0,
    invalid: 0,
    numberPages: 0,
    domainCreates: 0,
    domainDeletes: 0,
    updates: 0,
  };
  const updates: CallUpdate[] = [];
  const streams = new Map<string, AttachedStream>();
  const numbers: FakeTwilioNumber[] = [];
  accounts.set(accountSid, { token: newToken(), friendlyName: 'Primary account', status: 'active', numbers });
  const domains = new Map<string, FakeSipDomain>();
  const faults: { numbers?: TwilioFault; createDomain?: TwilioFault; deleteDomain?: TwilioFault } = {};
  let active = 0;
  let peak = 0;
  const gate = callHold();
  const timers = new Set<NodeJS.Timeout>();
  const scriptOf = (to: string): TwilioCallScript => scripts.get(to) ?? options.script?.(to) ?? 'answered';

  function error(res: http.ServerResponse, status: number, code: number, message: string): void {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }));
  }

  const resource = (c: FakeTwilioCall) => ({
    sid: c.sid,
    account_sid: c.accountSid,
    to: c.to,
    from: c.from,
    status: c.status,
    direction: c.direction ?? 'outbound-api',
    answered_by: c.answeredBy,
    duration: c.duration === null ? null : String(c.duration),
    date_created: rfc2822(c.createdAt),
    date_updated: rfc2822(new Date()),
    start_time: c.startedAt ? rfc2822(c.startedAt) : null,
    end_time: c.endedAt ? rfc2822(c.endedAt) : null,
    api_version: '2010-04-01',
    uri: `/2010-04-01/Accounts/${c.accountSid}/Calls/${c.sid}.json`,
  });

  async function sendCallback(c: FakeTwilioCall, event: string, sequence: number): Promise<void> {
    if (!c.statusCallback || (event !== 'completed' && !c.events.includes(event))) return;
    const params: Record<string, string> = {
      AccountSid: c.accountSid,
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
    await postSigned(c.accountSid, c.statusCallback, params);
  }

  /** Posts a callback form signed as Twilio signs it; kept in `callbacks` with the status it was answered (-1: no answer). */
  async function postSigned(accountSid: string, url: string, params: Record<string, string>): Promise<SentCallback> {
    const signature = signTwilio(tokenOf(accountSid), url, params);
    const sent: SentCallback = { url, params, signature, answered: 0 };
    callbacks.push(sent);
    try {
      const res = await fetch(transport(url), {
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
    return sent;
  }

  /** Twilio's asynchronous answering-machine verdict, posted (signed) to the call's AsyncAmdStatusCallback. */
  async function sendAmd(c: FakeTwilioCall, answeredBy: string): Promise<SentCallback | null> {
    if (!c.asyncAmdCallback) return null;
    const params = { AccountSid: c.accountSid, CallSid: c.sid, AnsweredBy: answeredBy, MachineDetectionDuration: '2150' };
    return postSigned(c.accountSid, c.asyncAmdCallback, params);
  }

  /** Plays the call's scripted sequence: status changes, each followed by its callback. */
  function play(c: FakeTwilioCall, script: TwilioCallScript): void {
    const steps: { status: string; event: string; answeredBy?: string; final?: boolean; silent?: boolean }[] = [
      { status: 'initiated', event: 'initiated' },
    ];
    if (script !== 'failed') steps.push({ status: 'ringing', event: 'ringing' });
    if (script === 'answered' || script === 'drop' || script === 'lost' || script === 'live')
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
      live: null,
    }[script];
    // A live call stays in progress until it is hung up (an update with Status=completed, or hangUpCall).
    if (final) steps.push({ status: final, event: 'completed', final: true, silent: script === 'lost' });
    // Each step schedules the next: timers of different lengths may fire out of order on a busy loop.
    const run = (i: number, released = false) => {
      const step = steps[i];
      if (!step) return;
      if (step.final && !released && gate.stops(() => run(i, true))) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        // Hung up through the API before its script got there.
        if (c.endedAt) return;
        c.status = step.status;
        if (step.answeredBy && c.asyncAmdCallback) {
          c.answeredBy = step.answeredBy;
          void sendAmd(c, step.answeredBy);
        } else if (step.answeredBy) c.answeredBy = step.answeredBy;
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

  /** Ends a call now (hung up by the API or by the other party): its final callback, and its stream stopped. */
  function endCall(c: FakeTwilioCall, status: 'completed' | 'canceled'): void {
    if (c.endedAt) return;
    c.status = status;
    c.endedAt = new Date();
    c.duration = c.startedAt ? Math.max(1, Math.round((c.endedAt.getTime() - c.startedAt.getTime()) / 1000)) : 0;
    active--;
    stopStream(c.sid);
    void sendCallback(c, 'completed', 3);
  }

  function stopStream(callSid: string): void {
    const stream = streams.get(callSid);
    streams.delete(callSid);
    void stream?.hangUp().catch(() => {});
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
    const sid = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]{32})(?:\.json$|\/)/.exec(url.pathname)?.[1] ?? '';
    const account = accounts.get(sid);
    if (!auth.startsWith('Basic ') || !account || user !== sid || pass !== account.token) {
      requests.unauthorized++;
      return error(res, 401, 20003, 'Authenticate');
    }
    const base = `/2010-04-01/Accounts/${sid}`;
    const path = url.pathname.slice(base.length);
    if (req.method === 'GET' && path === '.json') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(
        JSON.stringify({ sid, friendly_name: account.friendlyName, status: account.status, type: 'Full', uri: `${base}.json` }),
      );
    }
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
      const asyncAmd = form.get('AsyncAmd');
      if (asyncAmd && asyncAmd !== 'true' && asyncAmd !== 'false') return invalid(21629, 'Invalid AsyncAmd');
      const amdCallback = asyncAmd === 'true' ? form.get('AsyncAmdStatusCallback') : null;
      if (amdCallback !== null && !/^https?:\/\//.test(amdCallback)) return invalid(21609, 'Invalid AsyncAmdStatusCallback URL');
      const callback = form.get('StatusCallback');
      if (callback && !/^https?:\/\//.test(callback)) return invalid(21609, 'Invalid StatusCallback URL');
      const script = scriptOf(to);
      if (script === 'reject') return invalid(21211, `Invalid 'To' Phone Number: ${to}`);
      requests.creates++;
      createsByNumber.set(to, (createsByNumber.get(to) ?? 0) + 1);
      const call: FakeTwilioCall = {
        sid: `CA${crypto.randomBytes(16).toString('hex')}`,
        accountSid: sid,
        to,
        from,
        twiml,
        url: form.get('Url'),
        statusCallback: callback,
        events,
        machineDetection: amd,
        asyncAmdCallback: amd ? amdCallback : null,
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
        .filter((c) => c.accountSid === sid && (!to || c.to === to) && (!from || c.from === from))
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
        .slice(0, Number(url.searchParams.get('PageSize') ?? 50));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify({ calls: list.map(resource), page: 0, page_size: list.length }));
    }
    if (req.method === 'GET' && path === '/IncomingPhoneNumbers.json') {
      if (faults.numbers === 'hang') return;
      if (faults.numbers) return error(res, faults.numbers, 20500, 'Internal Server Error');
      requests.numberPages++;
      const pageSize = Math.min(1000, Number(url.searchParams.get('PageSize') ?? 50));
      const page = Number(url.searchParams.get('Page') ?? 0);
      const token = url.searchParams.get('PageToken');
      if (page > 0 && token !== `PN${page}`) return error(res, 400, 20001, 'Invalid PageToken');
      const sorted = [...account.numbers].sort((a, b) => a.sid.localeCompare(b.sid));
      const slice = sorted.slice(page * pageSize, (page + 1) * pageSize);
      const uri = (p: number) => `${base}/IncomingPhoneNumbers.json?PageSize=${pageSize}&Page=${p}${p > 0 ? `&PageToken=PN${p}` : ''}`;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(
        JSON.stringify({
          incoming_phone_numbers: slice.map((n) => ({
            sid: n.sid,
            account_sid: sid,
            phone_number: n.phoneNumber,
            friendly_name: n.friendlyName,
            capabilities: { voice: true, sms: true, mms: false, fax: false },
            status: 'in-use',
            api_version: '2010-04-01',
            uri: `${base}/IncomingPhoneNumbers/${n.sid}.json`,
          })),
          page,
          page_size: pageSize,
          start: page * pageSize,
          end: page * pageSize + Math.max(0, slice.length - 1),
          uri: uri(page),
          first_page_uri: uri(0),
          previous_page_uri: page > 0 ? uri(page - 1) : null,
          next_page_uri: (page + 1) * pageSize < sorted.length ? uri(page + 1) : null,
        }),
      );
    }
    const domainResource = (d: FakeSipDomain) => ({
      sid: d.sid,
      account_sid: d.accountSid,
      domain_name: d.domainName,
      friendly_name: d.friendlyName,
      voice_url: d.voiceUrl,
      voice_method: d.voiceMethod,
      sip_registration: false,
      date_created: rfc2822(d.createdAt),
      api_version: '2010-04-01',
      uri: `${base}/SIP/Domains/${d.sid}.json`,
    });
    if (req.method === 'POST' && path === '/SIP/Domains.json') {
      if (faults.createDomain === 'hang') return;
      if (faults.createDomain) return error(res, faults.createDomain, 20500, 'Internal Server Error');
      if (!/^application\/x-www-form-urlencoded/.test(req.headers['content-type'] ?? ''))
        return error(res, 400, 20001, 'Invalid content type');
      const form = await readForm(req);
      const domainName = form.get('DomainName') ?? '';
      const voiceUrl = form.get('VoiceUrl');
      const voiceMethod = form.get('VoiceMethod') ?? 'POST';
      const invalid = (code: number, message: string) => {
        requests.invalid++;
        error(res, 400, code, message);
      };
      if (!domainName) return invalid(21201, 'DomainName is required');
      if (!/^[a-z0-9][a-z0-9-]{0,62}\.sip\.twilio\.com$/i.test(domainName)) return invalid(21233, `Invalid DomainName: ${domainName}`);
      if ([...domains.values()].some((d) => d.domainName.toLowerCase() === domainName.toLowerCase()))
        return invalid(21232, 'The domain name is already in use');
      if (voiceUrl && !/^https?:\/\//.test(voiceUrl)) return invalid(21502, 'Invalid VoiceUrl');
      if (voiceMethod !== 'GET' && voiceMethod !== 'POST') return invalid(21503, 'Invalid VoiceMethod');
      requests.domainCreates++;
      const domain: FakeSipDomain = {
        sid: `SD${crypto.randomBytes(16).toString('hex')}`,
        accountSid: sid,
        domainName,
        friendlyName: form.get('FriendlyName'),
        voiceUrl,
        voiceMethod,
        createdAt: new Date(),
      };
      domains.set(domain.sid, domain);
      res.writeHead(201, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(domainResource(domain)));
    }
    if (req.method === 'GET' && path === '/SIP/Domains.json') {
      const list = [...domains.values()].filter((d) => d.accountSid === sid);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify({ domains: list.map(domainResource), page: 0, page_size: list.length, next_page_uri: null }));
    }
    const domainMatch = /^\/SIP\/Domains\/(SD[0-9a-f]{32})\.json$/.exec(path);
    if (req.method === 'DELETE' && domainMatch) {
      if (faults.deleteDomain === 'hang') return;
      if (faults.deleteDomain) return error(res, faults.deleteDomain, 20500, 'Internal Server Error');
      if (domains.get(domainMatch[1]!)?.accountSid !== sid || !domains.delete(domainMatch[1]!))
        return error(res, 404, 20404, 'The requested resource was not found');
      requests.domainDeletes++;
      res.writeHead(204);
      return res.end();
    }
    const fetchMatch = /^\/Calls\/(CA[0-9a-f]{32})\.json$/.exec(path);
    if (req.method === 'POST' && fetchMatch) {
      if (!/^application\/x-www-form-urlencoded/.test(req.headers['content-type'] ?? ''))
        return error(res, 400, 20001, 'Invalid content type');
      const form = await readForm(req);
      const call = calls.get(fetchMatch[1]!);
      const update: CallUpdate = {
        callSid: fetchMatch[1]!,
        accountSid: sid,
        at: new Date(),
        twiml: form.get('Twiml'),
        url: form.get('Url'),
        method: form.get('Method'),
        status: form.get('Status'),
        verbs: [],
        dial: null,
        answered: 0,
      };
      updates.push(update);
      const refuse = (status: number, code: number, message: string) => {
        update.answered = status;
        if (status === 400) requests.invalid++;
        error(res, status, code, message);
      };
      if (!call || call.accountSid !== sid) return refuse(404, 20404, 'The requested resource was not found');
      if (update.status && update.status !== 'completed' && update.status !== 'canceled')
        return refuse(400, 21218, `Invalid Status: ${update.status}`);
      if (!update.status && !update.twiml && !update.url) return refuse(400, 21205, 'Url parameter is required');
      if (update.url && !/^https?:\/\//.test(update.url)) return refuse(400, 21205, `Invalid Url: ${update.url}`);
      if (update.twiml) {
        if (!/<Response>[\s\S]*<\/Response>/.test(update.twiml)) return refuse(400, 12100, 'Document parse failure');
        update.verbs = parseTwiml(update.twiml);
        update.dial = update.verbs.find((v) => v.name === 'Dial') ?? null;
      }
      if (call.endedAt) return refuse(400, 21220, 'Call is not in-progress. Cannot redirect.');
      requests.updates++;
      if (update.status === 'completed') endCall(call, call.startedAt ? 'completed' : 'canceled');
      // Canceling applies to a call not yet answered; one in progress goes on (as Twilio does).
      else if (update.status === 'canceled') {
        if (!call.startedAt) endCall(call, 'canceled');
      } else {
        // New instructions replace the running ones: a <Connect><Stream> among them stops.
        call.twiml = update.twiml ?? '';
        call.url = update.url;
        stopStream(call.sid);
      }
      update.answered = 200;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(resource(call)));
    }
    if (req.method === 'GET' && fetchMatch) {
      requests.fetches++;
      const call = calls.get(fetchMatch[1]!);
      if (!call || call.accountSid !== sid) return error(res, 404, 20404, 'The requested resource was not found');
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(resource(call)));
    }
    return error(res, 404, 20404, 'The requested resource was not found');
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
    accountSid,
    /** The first account's auth token (as rotated). */
    get authToken() {
      return tokenOf(accountSid);
    },
    tokenOf,
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
    hold: gate.hold,
    get held() {
      return gate.held;
    },
    release: gate.release,
    numbers,
    domains,
    faults,
    updates,
    /** A call Twilio received on one of the account's numbers and answered: in progress until hung up. */
    addInboundCall(options: { from: string; to: string; accountSid?: string }): FakeTwilioCall {
      const now = new Date();
      const call: FakeTwilioCall = {
        sid: `CA${crypto.randomBytes(16).toString('hex')}`,
        accountSid: options.accountSid ?? accountSid,
        to: options.to,
        from: options.from,
        twiml: '',
        url: null,
        statusCallback: null,
        events: [],
        machineDetection: null,
        status: 'in-progress',
        answeredBy: null,
        createdAt: now,
        startedAt: now,
        endedAt: null,
        duration: null,
        direction: 'inbound',
      };
      calls.set(call.sid, call);
      active++;
      peak = Math.max(peak, active);
      return call;
    },
    /** Ties a Media Stream to a call: stopped when the call's instructions are replaced or the call ends. */
    attachStream(callSid: string, stream: AttachedStream): void {
      streams.set(callSid, stream);
    },
    /** Twilio's asynchronous machine verdict for a call made with AsyncAmd (null: the call asked for none). */
    sendAmd(callSid: string, answeredBy: string): Promise<SentCallback | null> {
      const call = calls.get(callSid);
      if (!call) throw new Error(`no call ${callSid}`);
      call.answeredBy = answeredBy;
      return sendAmd(call, answeredBy);
    },
    /** The instructions a call runs now (e.g. the TwiML the service answered an inbound call's voice request with). */
    setTwiml(callSid: string, twiml: string): void {
      calls.get(callSid)!.twiml = twiml;
    },
    /**
     * What Twilio does when a call's <Connect><Stream> ends while the call is up: it asks the <Connect>'s
     * `action` (POST, signed) what next and runs the answer: a new stream (the call's TwiML now), or a hang-up.
     */
    async connectAction(
      callSid: string,
    ): Promise<{ status: number; twiml: string; stream: { url: string; parameters: Record<string, string> } | null }> {
      const call = calls.get(callSid)!;
      const connect = parseTwiml(call.twiml).find((v) => v.name === 'Connect');
      const action = connect?.attributes.action;
      if (!action) throw new Error('the call has no <Connect action>');
      const params = {
        AccountSid: call.accountSid,
        CallSid: call.sid,
        CallStatus: call.status,
        Direction: call.direction ?? 'outbound-api',
      };
      const signature = signTwilio(tokenOf(call.accountSid), action, params);
      const res = await fetch(transport(action), {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signature },
        body: new URLSearchParams(params).toString(),
        signal: AbortSignal.timeout(10_000),
      });
      const twiml = await res.text();
      if (res.status !== 200) return { status: res.status, twiml, stream: null };
      call.twiml = twiml;
      const verbs = parseTwiml(twiml);
      if (verbs.some((v) => v.name === 'Hangup') && !verbs.some((v) => v.name === 'Connect')) endCall(call, 'completed');
      return { status: res.status, twiml, stream: this.streamOf(callSid) };
    },
    /** The other party hangs up a call in progress. */
    hangUpCall(callSid: string): void {
      const call = calls.get(callSid);
      if (call && !call.endedAt) endCall(call, call.startedAt ? 'completed' : 'canceled');
    },
    /** The Media Stream a call's TwiML opens (<Connect><Stream url> with its <Parameter>s), or null. */
    streamOf(callSid: string): { url: string; parameters: Record<string, string> } | null {
      const connect = parseTwiml(calls.get(callSid)?.twiml ?? '').find((v) => v.name === 'Connect');
      const stream = connect?.children.find((v) => v.name === 'Stream');
      if (!stream?.attributes.url) return null;
      const parameters: Record<string, string> = {};
      for (const p of stream.children)
        if (p.name === 'Parameter' && p.attributes.name) parameters[p.attributes.name] = p.attributes.value ?? '';
      return { url: stream.attributes.url, parameters };
    },
    script(number: string, script: TwilioCallScript) {
      scripts.set(number, script);
    },
    /** Buys a number for the account. */
    addNumber(phoneNumber: string, friendlyName = phoneNumber): FakeTwilioNumber {
      const n = { sid: `PN${crypto.randomBytes(16).toString('hex')}`, phoneNumber, friendlyName };
      numbers.push(n);
      return n;
    },
    /** Opens another account (a different customer of Twilio), with its own token, calls, numbers and domains. */
    addAccount(friendlyName: string) {
      const sid = `AC${crypto.randomBytes(16).toString('hex')}`;
      const own: FakeTwilioNumber[] = [];
      accounts.set(sid, { token: newToken(), friendlyName, status: 'active', numbers: own });
      return {
        accountSid: sid,
        get authToken() {
          return tokenOf(sid);
        },
        numbers: own,
        addNumber(phoneNumber: string, name = phoneNumber): FakeTwilioNumber {
          const n = { sid: `PN${crypto.randomBytes(16).toString('hex')}`, phoneNumber, friendlyName: name };
          own.push(n);
          return n;
        },
      };
    },
    /** A new auth token for the account (the old one is refused from now on, as after a rotation in Twilio's console). */
    rotateToken(sid: string): string {
      accounts.get(sid)!.token = newToken();
      return tokenOf(sid);
    },
    /** Twilio asking the domain's VoiceUrl what to do with a call to sip:<user>@<domain>, signed as Twilio signs it. */
    async callSipDomain(domainSid: string, user: string, options: { signature?: string; accountSid?: string } = {}) {
      const d = domains.get(domainSid);
      if (!d?.voiceUrl) throw new Error(`no domain ${domainSid} with a VoiceUrl`);
      const params: Record<string, string> = {
        AccountSid: options.accountSid ?? d.accountSid,
        ApiVersion: '2010-04-01',
        CallSid: `CA${crypto.randomBytes(16).toString('hex')}`,
        CallStatus: 'ringing',
        Direction: 'inbound',
        From: 'sip:caller@example.org',
        To: `sip:${user}@${d.domainName}`,
      };
      const res = await fetch(transport(d.voiceUrl), {
        method: d.voiceMethod,
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'X-Twilio-Signature': options.signature ?? signTwilio(tokenOf(d.accountSid), d.voiceUrl, params),
          'User-Agent': 'TwilioProxy/1.1',
        },
        body: new URLSearchParams(params).toString(),
      });
      return { status: res.status, contentType: res.headers.get('content-type'), body: await res.text(), params };
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type FakeTwilio = Awaited<ReturnType<typeof startFakeTwilio>>;

/** The service's settings that place its calls through this fake as the deployment's Twilio account. */
export function twilioDialerSettings(twilio: FakeTwilio, from = '+15005550006'): Record<string, string> {
  return {
    DIALER: 'twilio',
    TWILIO_API_BASE_URL: twilio.url,
    TWILIO_ACCOUNT_SID: twilio.accountSid,
    TWILIO_AUTH_TOKEN: twilio.authToken,
    TWILIO_FROM_NUMBER: from,
  };
}
