import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signTwilio, type FakeTwilio } from './fake-twilio';

// Twilio's inbound side, in front of the Twilio fake (the service is pointed at this address; what it does
// not serve goes on to the fake unchanged): an IncomingPhoneNumber fetched and updated
// (`/IncomingPhoneNumbers/{PN}.json`: VoiceUrl, VoiceMethod, StatusCallback, StatusCallbackMethod,
// VoiceApplicationSid, validated as Twilio does, 404 for a number the account lacks), and a SIP domain's
// call authentication: credential lists and their credentials (Username up to 32 characters, Password of
// 12 or more with upper and lower case and a digit), IP access control lists and their IPv4 addresses (up to
// 100, with CidrPrefixLength), each mapped to a domain (`/SIP/Domains/{SD}/Auth/Calls/…Mappings.json`,
// whose sid is the list's), deleted with 404 for an unknown sid. `callNumber` plays a call to a number as
// Twilio does: its VoiceUrl asked, signed, then the StatusCallback; `letsIn` says whether a SIP INVITE with
// these credentials or from this address would pass the domain's authentication.

export interface FakeNumberConfig {
  voice_url: string | null;
  voice_method: string;
  status_callback: string | null;
  status_callback_method: string;
  voice_application_sid: string | null;
}

interface CredentialList {
  sid: string;
  accountSid: string;
  friendlyName: string;
  credentials: { sid: string; username: string; password: string }[];
}

interface IpList {
  sid: string;
  accountSid: string;
  friendlyName: string;
  addresses: { sid: string; ip: string; prefix: number }[];
}

const URL_RE = /^https?:\/\//;

function inCidr(ip: string, base: string, prefix: number): boolean {
  const n = (a: string) => a.split('.').reduce((acc, o) => (acc << 8) + Number(o), 0) >>> 0;
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
  return (n(ip) & mask) === (n(base) & mask);
}

export async function startTwilioInbound(fake: FakeTwilio, options: { transport?: (url: string) => string } = {}) {
  const transport = options.transport ?? ((u: string) => u);
  const configs = new Map<string, FakeNumberConfig>();
  const credentialLists = new Map<string, CredentialList>();
  const ipLists = new Map<string, IpList>();
  /** Domain sid → mapped list sids. */
  const mappings = new Map<string, { credentialLists: Set<string>; ipLists: Set<string> }>();
  const faults: { updateNumber?: number | 'hang'; createCredential?: number } = {};
  const requests = { numberFetches: 0, numberUpdates: 0, listCreates: 0, listDeletes: 0 };
  /** The form of every SIP domain created through this address (the fake keeps only the fields it reads). */
  const domainCreates: URLSearchParams[] = [];
  const rfc2822 = (d: Date) => d.toUTCString().replace('GMT', '+0000');

  const configOf = (sid: string): FakeNumberConfig => {
    let c = configs.get(sid);
    if (!c) {
      c = {
        voice_url: 'https://demo.twilio.com/welcome/voice/',
        voice_method: 'POST',
        status_callback: null,
        status_callback_method: 'POST',
        voice_application_sid: null,
      };
      configs.set(sid, c);
    }
    return c;
  };
  const mappingOf = (domainSid: string) => {
    let m = mappings.get(domainSid);
    if (!m) mappings.set(domainSid, (m = { credentialLists: new Set(), ipLists: new Set() }));
    return m;
  };

  function error(res: http.ServerResponse, status: number, code: number, message: string): void {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }));
  }
  function json(res: http.ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  }
  async function read(req: http.IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
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
      const text = Buffer.from(await upstream.arrayBuffer());
      res.writeHead(upstream.status, { 'Content-Type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(text);
    } catch {
      res.destroy();
    }
  }

  const server = http.createServer(async (req, res) => {
    const body = await read(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    const match = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]{32})(\/.*)$/.exec(url.pathname);
    const sid = match?.[1] ?? '';
    const path = match?.[2] ?? '';
    const mine =
      /^\/IncomingPhoneNumbers\/PN[0-9a-f]{32}\.json$/.test(path) ||
      /^\/SIP\/(CredentialLists|IpAccessControlLists)(\.json|\/)/.test(path) ||
      /^\/SIP\/Domains\/SD[0-9a-f]{32}\/Auth\//.test(path);
    if (req.method === 'POST' && /^\/SIP\/Domains\.json$/.test(path)) domainCreates.push(new URLSearchParams(body.toString('utf8')));
    if (!match || !mine) return forward(req, res, body);
    const [user, pass] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
      .toString()
      .split(':');
    let token: string | undefined;
    try {
      token = fake.tokenOf(sid);
    } catch {
      token = undefined;
    }
    if (!req.headers.authorization?.startsWith('Basic ') || user !== sid || !token || pass !== token)
      return error(res, 401, 20003, 'Authenticate');
    const form = new URLSearchParams(body.toString('utf8'));
    const isForm = /^application\/x-www-form-urlencoded/.test(req.headers['content-type'] ?? '');
    const base = `/2010-04-01/Accounts/${sid}`;
    const notFound = () => error(res, 404, 20404, 'The requested resource was not found');
    const invalid = (code: number, message: string) => error(res, 400, code, message);

    // The account's numbers: the primary account's are the fake's `numbers`.
    const number = /^\/IncomingPhoneNumbers\/(PN[0-9a-f]{32})\.json$/.exec(path);
    if (number) {
      const n = sid === fake.accountSid ? fake.numbers.find((x) => x.sid === number[1]) : undefined;
      if (!n) return notFound();
      const c = configOf(n.sid);
      const resource = () => ({
        sid: n.sid,
        account_sid: sid,
        phone_number: n.phoneNumber,
        friendly_name: n.friendlyName,
        ...c,
        voice_fallback_url: null,
        trunk_sid: null,
        capabilities: { voice: true, sms: true, mms: false, fax: false },
        status: 'in-use',
        date_updated: rfc2822(new Date()),
        api_version: '2010-04-01',
        uri: `${base}/IncomingPhoneNumbers/${n.sid}.json`,
      });
      if (req.method === 'GET') {
        requests.numberFetches++;
        return json(res, 200, resource());
      }
      if (req.method !== 'POST') return error(res, 405, 20004, 'Method not allowed');
      if (faults.updateNumber === 'hang') return;
      if (faults.updateNumber) return error(res, faults.updateNumber, 20500, 'Internal Server Error');
      if (!isForm) return invalid(20001, 'Invalid content type');
      const voiceUrl = form.get('VoiceUrl');
      const status = form.get('StatusCallback');
      const app = form.get('VoiceApplicationSid');
      for (const [name, value] of [
        ['VoiceMethod', form.get('VoiceMethod')],
        ['StatusCallbackMethod', form.get('StatusCallbackMethod')],
      ] as const)
        if (value !== null && value !== 'GET' && value !== 'POST') return invalid(21503, `Invalid ${name}: ${value}`);
      if (voiceUrl && !URL_RE.test(voiceUrl)) return invalid(21502, `Invalid VoiceUrl: ${voiceUrl}`);
      if (status && !URL_RE.test(status)) return invalid(21609, `Invalid StatusCallback: ${status}`);
      if (app && !/^AP[0-9a-f]{32}$/.test(app)) return invalid(21606, `Invalid VoiceApplicationSid: ${app}`);
      requests.numberUpdates++;
      // A parameter sent empty clears the field; one not sent is left as it is.
      if (voiceUrl !== null) c.voice_url = voiceUrl || null;
      if (form.get('VoiceMethod')) c.voice_method = form.get('VoiceMethod')!;
      if (status !== null) c.status_callback = status || null;
      if (form.get('StatusCallbackMethod')) c.status_callback_method = form.get('StatusCallbackMethod')!;
      if (app !== null) c.voice_application_sid = app || null;
      return json(res, 200, resource());
    }

    const listResource = (kind: 'CredentialLists' | 'IpAccessControlLists', l: { sid: string; friendlyName: string }) => ({
      sid: l.sid,
      account_sid: sid,
      friendly_name: l.friendlyName,
      date_created: rfc2822(new Date()),
      date_updated: rfc2822(new Date()),
      uri: `${base}/SIP/${kind}/${l.sid}.json`,
    });
    const create = /^\/SIP\/(CredentialLists|IpAccessControlLists)\.json$/.exec(path);
    if (create && req.method === 'POST') {
      if (!isForm) return invalid(20001, 'Invalid content type');
      const name = form.get('FriendlyName') ?? '';
      if (!name) return invalid(21201, 'FriendlyName is required');
      if (name.length > 64) return invalid(21201, 'FriendlyName must be 64 characters or fewer');
      requests.listCreates++;
      if (create[1] === 'CredentialLists') {
        const l: CredentialList = {
          sid: `CL${crypto.randomBytes(16).toString('hex')}`,
          accountSid: sid,
          friendlyName: name,
          credentials: [],
        };
        credentialLists.set(l.sid, l);
        return json(res, 201, listResource('CredentialLists', l));
      }
      const l: IpList = { sid: `AL${crypto.randomBytes(16).toString('hex')}`, accountSid: sid, friendlyName: name, addresses: [] };
      ipLists.set(l.sid, l);
      return json(res, 201, listResource('IpAccessControlLists', l));
    }
    const one = /^\/SIP\/(CredentialLists|IpAccessControlLists)\/((?:CL|AL)[0-9a-f]{32})\.json$/.exec(path);
    if (one && req.method === 'DELETE') {
      const lists = one[1] === 'CredentialLists' ? credentialLists : ipLists;
      if (lists.get(one[2]!)?.accountSid !== sid) return notFound();
      lists.delete(one[2]!);
      requests.listDeletes++;
      res.writeHead(204);
      return res.end();
    }
    const credential = /^\/SIP\/CredentialLists\/(CL[0-9a-f]{32})\/Credentials\.json$/.exec(path);
    if (credential && req.method === 'POST') {
      const l = credentialLists.get(credential[1]!);
      if (l?.accountSid !== sid) return notFound();
      if (faults.createCredential) return error(res, faults.createCredential, 20500, 'Internal Server Error');
      const username = form.get('Username') ?? '';
      const password = form.get('Password') ?? '';
      if (!username || username.length > 32 || !/^[A-Za-z0-9._~-]+$/.test(username)) return invalid(21222, 'Invalid SipAuthUsername');
      if (password.length < 12 || !/[A-Z]/.test(password) || !/[a-z]/.test(password) || !/\d/.test(password))
        return invalid(21224, 'The password must be at least 12 characters, with a digit and mixed case');
      if (l.credentials.some((c) => c.username === username)) return invalid(21450, 'A credential with this username already exists');
      const c = { sid: `CR${crypto.randomBytes(16).toString('hex')}`, username, password };
      l.credentials.push(c);
      return json(res, 201, {
        sid: c.sid,
        account_sid: sid,
        credential_list_sid: l.sid,
        username,
        uri: `${base}/SIP/CredentialLists/${l.sid}/Credentials/${c.sid}.json`,
      });
    }
    const address = /^\/SIP\/IpAccessControlLists\/(AL[0-9a-f]{32})\/IpAddresses\.json$/.exec(path);
    if (address && req.method === 'POST') {
      const l = ipLists.get(address[1]!);
      if (l?.accountSid !== sid) return notFound();
      const ip = form.get('IpAddress') ?? '';
      const prefix = Number(form.get('CidrPrefixLength') ?? '32');
      if (!form.get('FriendlyName')) return invalid(21201, 'FriendlyName is required');
      if (!/^(\d{1,3})(\.\d{1,3}){3}$/.test(ip) || ip.split('.').some((o) => Number(o) > 255))
        return invalid(21219, `Invalid IpAddress: ${ip}`);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > 32) return invalid(21219, 'Invalid CidrPrefixLength');
      if (l.addresses.length >= 100) return invalid(21228, 'An IpAccessControlList holds at most 100 addresses');
      const a = { sid: `IP${crypto.randomBytes(16).toString('hex')}`, ip, prefix };
      l.addresses.push(a);
      return json(res, 201, {
        sid: a.sid,
        account_sid: sid,
        ip_access_control_list_sid: l.sid,
        ip_address: ip,
        cidr_prefix_length: prefix,
      });
    }
    const mapping =
      /^\/SIP\/Domains\/(SD[0-9a-f]{32})\/Auth\/Calls\/(CredentialListMappings|IpAccessControlListMappings)(?:\/((?:CL|AL)[0-9a-f]{32}))?\.json$/.exec(
        path,
      );
    if (mapping) {
      const [, domainSid, kind, listSid] = mapping;
      if (fake.domains.get(domainSid!)?.accountSid !== sid) return notFound();
      const set = kind === 'CredentialListMappings' ? mappingOf(domainSid!).credentialLists : mappingOf(domainSid!).ipLists;
      if (req.method === 'DELETE' && listSid) {
        if (!set.delete(listSid)) return notFound();
        res.writeHead(204);
        return res.end();
      }
      if (req.method === 'POST' && !listSid) {
        const param = kind === 'CredentialListMappings' ? 'CredentialListSid' : 'IpAccessControlListSid';
        const value = form.get(param) ?? '';
        const lists = kind === 'CredentialListMappings' ? credentialLists : ipLists;
        if (lists.get(value)?.accountSid !== sid) return invalid(21201, `Invalid ${param}: ${value}`);
        if (set.has(value)) return invalid(21231, 'The list is already mapped to the domain');
        set.add(value);
        return json(res, 201, { sid: value, account_sid: sid, friendly_name: lists.get(value)!.friendlyName });
      }
    }
    return notFound();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    configs,
    configOf,
    credentialLists,
    ipLists,
    mappings,
    faults,
    requests,
    domainCreates,
    /** Whether a SIP INVITE to the domain would pass its authentication (Twilio's challenge, or its IP lists). */
    letsIn(domainSid: string, caller: { username: string; password: string } | { ip: string }): boolean {
      if (!fake.domains.has(domainSid)) return false;
      const m = mappings.get(domainSid);
      if (!m) return false;
      if ('ip' in caller) return [...m.ipLists].some((sid) => ipLists.get(sid)?.addresses.some((a) => inCidr(caller.ip, a.ip, a.prefix)));
      return [...m.credentialLists].some((sid) =>
        credentialLists.get(sid)?.credentials.some((c) => c.username === caller.username && c.password === caller.password),
      );
    },
    /** A call to one of the account's numbers: Twilio asks its VoiceUrl, signed as Twilio signs. */
    async callNumber(phoneNumber: string, options: { from?: string; signature?: string } = {}) {
      const n = fake.numbers.find((x) => x.phoneNumber === phoneNumber);
      if (!n) throw new Error(`no number ${phoneNumber}`);
      const c = configOf(n.sid);
      if (!c.voice_url) throw new Error(`${phoneNumber} has no VoiceUrl`);
      const from = options.from ?? '+14155550142';
      const params: Record<string, string> = {
        AccountSid: fake.accountSid,
        ApiVersion: '2010-04-01',
        CallSid: `CA${crypto.randomBytes(16).toString('hex')}`,
        CallStatus: 'ringing',
        Called: phoneNumber,
        Caller: from,
        Direction: 'inbound',
        From: from,
        To: phoneNumber,
      };
      const res = await fetch(transport(c.voice_url), {
        method: c.voice_method,
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'X-Twilio-Signature': options.signature ?? signTwilio(fake.authToken, c.voice_url, params),
          'User-Agent': 'TwilioProxy/1.1',
        },
        body: new URLSearchParams(params).toString(),
        signal: AbortSignal.timeout(10_000),
      });
      return {
        status: res.status,
        contentType: res.headers.get('content-type'),
        body: await res.text(),
        params: params as Record<string, string> & { CallSid: string; From: string },
      };
    },
    /** The number's status callback for a call, as Twilio sends it when the call ends. */
    async sendStatus(phoneNumber: string, callSid: string, status: string, from = '+14155550142') {
      const n = fake.numbers.find((x) => x.phoneNumber === phoneNumber)!;
      const c = configOf(n.sid);
      if (!c.status_callback) throw new Error(`${phoneNumber} has no StatusCallback`);
      const params: Record<string, string> = {
        AccountSid: fake.accountSid,
        ApiVersion: '2010-04-01',
        CallSid: callSid,
        CallStatus: status,
        CallDuration: '0',
        Direction: 'inbound',
        From: from,
        To: phoneNumber,
        Timestamp: rfc2822(new Date()),
      };
      const res = await fetch(transport(c.status_callback), {
        method: c.status_callback_method,
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'X-Twilio-Signature': signTwilio(fake.authToken, c.status_callback, params),
        },
        body: new URLSearchParams(params).toString(),
        signal: AbortSignal.timeout(10_000),
      });
      return { status: res.status, body: await res.json().catch(() => null) };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type TwilioInbound = Awaited<ReturnType<typeof startTwilioInbound>>;
