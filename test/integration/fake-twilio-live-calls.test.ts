import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTwilio, startFakeTwilio, type FakeTwilio } from '../support/fake-twilio';
import { SimulatedCaller } from '../support/voice/simulated-caller';
import { startStubMediaServer } from '../support/voice/stub-media-server';

// The Twilio fake's live calls, which the voice runtime acts on: a call in progress updated through the
// REST API with new TwiML (a transfer's <Dial>), a URL, or Status=completed (a hang-up), each recorded;
// its Media Stream stopped as Twilio stops it; Twilio's errors for what it refuses.

describe('fake Twilio: updating live calls', () => {
  let fake: FakeTwilio;
  let media: Awaited<ReturnType<typeof startStubMediaServer>>;
  let hooks: http.Server;
  const received: { params: URLSearchParams; signature: string }[] = [];
  let hookUrl = '';

  beforeAll(async () => {
    fake = await startFakeTwilio({ stepMs: 30, script: (to) => (to === '+15550009999' ? 'live' : 'answered') });
    media = await startStubMediaServer();
    hooks = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      received.push({
        params: new URLSearchParams(Buffer.concat(chunks).toString()),
        signature: String(req.headers['x-twilio-signature']),
      });
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/status`;
  });
  afterAll(async () => {
    await fake.close();
    await media.close();
    hooks.closeAllConnections();
    await new Promise((resolve) => hooks.close(resolve));
  });

  const post = async (path: string, form: Record<string, string>, auth = { sid: fake.accountSid, token: fake.authToken }) => {
    const res = await fetch(`${fake.url}/2010-04-01/Accounts/${auth.sid}${path}`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from(`${auth.sid}:${auth.token}`).toString('base64')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams(form).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  /** An inbound call whose Media Stream is a simulated caller on the stub engine, tied to the call as Twilio ties it. */
  async function liveInboundCall() {
    const call = fake.addInboundCall({ from: '+15557654321', to: '+15550001000' });
    const caller = await SimulatedCaller.connect({ url: media.url, token: 't', callSid: call.sid, accountSid: call.accountSid });
    fake.attachStream(call.sid, caller);
    return { call, caller };
  }

  it('redirects a call to a cold transfer: the update is recorded with its <Dial>, the stream stops', async () => {
    const { call, caller } = await liveInboundCall();
    const twiml =
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say>Transferring you now.</Say><Dial callerId="+15550001000" timeout="20" action="https://api.example.org/voice/transfer-status"><Number>+15551234567</Number></Dial></Response>';
    const res = await post(`/Calls/${call.sid}.json`, { Twiml: twiml });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ sid: call.sid, status: 'in-progress', direction: 'inbound', to: '+15550001000' });
    const update = fake.updates.at(-1)!;
    expect(update).toMatchObject({ callSid: call.sid, accountSid: fake.accountSid, twiml, url: null, status: null, answered: 200 });
    expect(update.verbs.map((v) => v.name)).toEqual(['Say', 'Dial']);
    expect(update.verbs[0]!.text).toBe('Transferring you now.');
    expect(update.dial).toEqual({
      name: 'Dial',
      attributes: { callerId: '+15550001000', timeout: '20', action: 'https://api.example.org/voice/transfer-status' },
      text: '',
      children: [{ name: 'Number', attributes: {}, text: '+15551234567', children: [] }],
    });
    expect(fake.calls.get(call.sid)!.twiml).toBe(twiml);
    // Twilio ends the <Connect><Stream> the call was running: `stop`, then the socket closes.
    expect(await caller.closed).toMatchObject({ code: 1000, by: 'caller' });
    const conn = media.connections.find((c) => c.streamSid() === caller.streamSid)!;
    expect(conn.messages.at(-1)!.body).toMatchObject({ event: 'stop', stop: { callSid: call.sid, accountSid: fake.accountSid } });
    expect(fake.calls.get(call.sid)!.status).toBe('in-progress');
  });

  it('records a warm transfer: a whisper URL on the number, or a conference the agent joins the caller to', async () => {
    const { call } = await liveInboundCall();
    const warm =
      '<Response><Dial><Number url="https://api.example.org/voice/whisper?summary=1" method="POST">+15551234567</Number></Dial></Response>';
    expect((await post(`/Calls/${call.sid}.json`, { Twiml: warm })).status).toBe(200);
    expect(fake.updates.at(-1)!.dial!.children[0]).toEqual({
      name: 'Number',
      attributes: { url: 'https://api.example.org/voice/whisper?summary=1', method: 'POST' },
      text: '+15551234567',
      children: [],
    });
    const conference = '<Response><Dial><Conference endConferenceOnExit="true">transfer-abc</Conference></Dial></Response>';
    expect((await post(`/Calls/${call.sid}.json`, { Twiml: conference })).status).toBe(200);
    expect(fake.updates.at(-1)!.dial!.children[0]).toMatchObject({ name: 'Conference', text: 'transfer-abc' });
    // Or instructions by URL.
    const byUrl = await post(`/Calls/${call.sid}.json`, { Url: 'https://api.example.org/voice/transfer', Method: 'POST' });
    expect(byUrl.status).toBe(200);
    expect(fake.updates.at(-1)).toMatchObject({ url: 'https://api.example.org/voice/transfer', method: 'POST', verbs: [], dial: null });
    expect(fake.calls.get(call.sid)!.url).toBe('https://api.example.org/voice/transfer');
  });

  it('hangs up with Status=completed: the call completes, its stream stops, a later update is refused with 21220', async () => {
    const { call, caller } = await liveInboundCall();
    const active = fake.active;
    const res = await post(`/Calls/${call.sid}.json`, { Status: 'completed' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ sid: call.sid, status: 'completed' });
    expect(fake.updates.at(-1)).toMatchObject({ callSid: call.sid, status: 'completed', answered: 200 });
    expect(fake.calls.get(call.sid)!.endedAt).toBeInstanceOf(Date);
    expect(fake.active).toBe(active - 1);
    expect((await caller.closed).by).toBe('caller');
    const again = await post(`/Calls/${call.sid}.json`, { Twiml: '<Response><Hangup/></Response>' });
    expect(again).toEqual({
      status: 400,
      body: {
        code: 21220,
        message: 'Call is not in-progress. Cannot redirect.',
        more_info: 'https://www.twilio.com/docs/errors/21220',
        status: 400,
      },
    });
    expect(fake.updates.at(-1)!.answered).toBe(400);
    expect(fake.active).toBe(active - 1);
  });

  it("refuses what Twilio refuses: an unknown call, another account's call, a wrong key, bad TwiML, an unknown status", async () => {
    const { call } = await liveInboundCall();
    const other = fake.addAccount('Other customer');
    const unknown = 'CA0123456789abcdef0123456789abcdef';
    expect((await post(`/Calls/${unknown}.json`, { Status: 'completed' })).body).toMatchObject({ status: 404, code: 20404 });
    expect((await post(`/Calls/${call.sid}.json`, { Status: 'completed' }, { sid: other.accountSid, token: other.authToken })).status).toBe(
      404,
    );
    expect((await post(`/Calls/${call.sid}.json`, { Status: 'completed' }, { sid: fake.accountSid, token: 'wrong' })).status).toBe(401);
    expect((await post(`/Calls/${call.sid}.json`, { Twiml: '<Dial>+1555</Dial>' })).body).toMatchObject({ status: 400, code: 12100 });
    expect((await post(`/Calls/${call.sid}.json`, { Status: 'busy' })).body).toMatchObject({ status: 400, code: 21218 });
    expect((await post(`/Calls/${call.sid}.json`, {})).body).toMatchObject({ status: 400, code: 21205 });
    expect((await post(`/Calls/${call.sid}.json`, { Url: 'ftp://x' })).body).toMatchObject({ status: 400, code: 21205 });
    // None of them touched the call.
    expect(fake.calls.get(call.sid)).toMatchObject({ status: 'in-progress', endedAt: null, twiml: '' });
  });

  it('keeps a `live` outbound call in progress, opens its <Stream> for a simulated caller, and calls back when it is hung up', async () => {
    const twiml = `<Response><Connect><Stream url="${media.url}/twilio/media-stream"><Parameter name="token" value="vst-123"/><Parameter name="campaign" value="c-9"/></Stream></Connect></Response>`;
    const created = await post('/Calls.json', {
      To: '+15550009999',
      From: '+15550001000',
      Twiml: twiml,
      StatusCallback: hookUrl,
      StatusCallbackEvent: 'initiated ringing answered completed',
    });
    expect(created.status).toBe(201);
    const sid = created.body.sid as string;
    // Its script answers it and stops there: well past the steps of an answered call, it is still in progress.
    await waitUntil(() => received.some((r) => r.params.get('CallSid') === sid && r.params.get('CallStatus') === 'in-progress'));
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.calls.get(sid)!.status).toBe('in-progress');

    const stream = fake.streamOf(sid)!;
    expect(stream).toEqual({ url: `${media.url}/twilio/media-stream`, parameters: { token: 'vst-123', campaign: 'c-9' } });
    const { token, ...customParameters } = stream.parameters;
    const caller = await SimulatedCaller.connect({ url: stream.url, token, customParameters, callSid: sid, accountSid: fake.accountSid });
    fake.attachStream(sid, caller);
    await waitUntil(() => media.connections.find((c) => c.streamSid() === caller.streamSid));
    const start = media.connections.find((c) => c.streamSid() === caller.streamSid)!.messages[1]!.body;
    expect(start.start).toMatchObject({ callSid: sid, customParameters: { token: 'vst-123', campaign: 'c-9' } });

    expect((await post(`/Calls/${sid}.json`, { Status: 'completed' })).body).toMatchObject({ status: 'completed' });
    await caller.closed;
    const completed = await waitUntil(() =>
      received.find((r) => r.params.get('CallSid') === sid && r.params.get('CallStatus') === 'completed'),
    );
    expect(completed.signature).toBe(signTwilio(fake.authToken, hookUrl, Object.fromEntries(completed.params)));
    expect(Number(completed.params.get('CallDuration'))).toBeGreaterThanOrEqual(1);
  });

  it('cancels a call not yet answered; its script does not go on after', async () => {
    const slow = await startFakeTwilio({ stepMs: 400 });
    try {
      const res = await fetch(`${slow.url}/2010-04-01/Accounts/${slow.accountSid}/Calls.json`, {
        method: 'POST',
        headers: {
          Authorization: `Basic ${Buffer.from(`${slow.accountSid}:${slow.authToken}`).toString('base64')}`,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ To: '+15550002222', From: '+15550001000', Twiml: '<Response><Say>hi</Say></Response>' }).toString(),
      });
      const { sid } = (await res.json()) as { sid: string };
      const cancel = await fetch(`${slow.url}/2010-04-01/Accounts/${slow.accountSid}/Calls/${sid}.json`, {
        method: 'POST',
        headers: {
          Authorization: `Basic ${Buffer.from(`${slow.accountSid}:${slow.authToken}`).toString('base64')}`,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: 'Status=canceled',
      });
      expect(cancel.status).toBe(200);
      expect(((await cancel.json()) as { status: string }).status).toBe('canceled');
      expect(slow.active).toBe(0);
      // Past the script's whole run (four steps of 400 ms), it stays canceled and counted once.
      await new Promise((r) => setTimeout(r, 1_800));
      expect(slow.calls.get(sid)!.status).toBe('canceled');
      expect(slow.active).toBe(0);
    } finally {
      await slow.close();
    }
  });
});

async function waitUntil<T>(check: () => T | undefined | false, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
