import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signWebhook } from '../../platform/adapters/meetings/vendor';

// A local server speaking Recall.ai's REST protocol (the part the HTTP adapter uses), plus a sender of
// signed webhooks in Recall's shape, so tests drive a bot's lifecycle event by event.

export interface FakeBot {
  id: string;
  meeting_url: string;
  bot_name: string;
  metadata: Record<string, string>;
  left: boolean;
  recordings: { id: string; started_at: string; completed_at: string }[];
}

export interface FakeMeetingVendor {
  baseUrl: string;
  apiKey: string;
  bots: FakeBot[];
  /** Every request, as `METHOD path`, with its Authorization header. */
  requests: { method: string; path: string; authorization: string | undefined }[];
  transcripts: Map<string, string>; // transcript id → recording id
  /** Posts one signed event about a bot to the capture webhook; returns the HTTP status. */
  emit(
    bot: FakeBot,
    event: string,
    extra?: Record<string, unknown>,
    options?: { id?: string; code?: string; sub_code?: string },
  ): Promise<number>;
  close(): Promise<void>;
}

export const FAKE_TRANSCRIPT = [
  {
    participant: { id: 1, name: 'Dana Buyer', email: 'dana@customer.example', is_host: true },
    words: [
      { text: 'We', start_timestamp: { relative: 0.5 } },
      { text: 'need', start_timestamp: { relative: 0.8 } },
      { text: 'pricing.', start_timestamp: { relative: 1.1 } },
    ],
  },
  {
    participant: { id: 2, name: 'Sam Seller', email: null, is_host: false },
    words: [
      { text: 'Sending', start_timestamp: { relative: 3 } },
      { text: 'it', start_timestamp: { relative: 3.2 } },
      { text: 'today.', start_timestamp: { relative: 3.4 } },
    ],
  },
];

/** `options.webhookUrl` is read on each emit, so a test may set it once the service's port is known. */
export async function startFakeMeetingVendor(options: { webhookUrl: string; secret: string }): Promise<FakeMeetingVendor> {
  const apiKey = `key_${crypto.randomBytes(8).toString('hex')}`;
  const bots: FakeBot[] = [];
  const requests: FakeMeetingVendor['requests'] = [];
  const transcripts = new Map<string, string>();
  let baseUrl = '';

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const path = (req.url ?? '').split('?')[0]!;
    requests.push({ method: req.method!, path, authorization: req.headers.authorization });
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (path.startsWith('/download/transcript/')) return send(200, FAKE_TRANSCRIPT);
    if (req.headers.authorization !== `Token ${apiKey}`) return send(401, { detail: 'Invalid token.' });
    let m: RegExpMatchArray | null;
    if (req.method === 'POST' && path === '/api/v1/bot/') {
      const bot: FakeBot = {
        id: crypto.randomUUID(),
        meeting_url: body.meeting_url,
        bot_name: body.bot_name,
        metadata: body.metadata ?? {},
        left: false,
        recordings: [],
      };
      bots.push(bot);
      return send(201, {
        id: bot.id,
        meeting_url: { platform: 'zoom' },
        bot_name: bot.bot_name,
        metadata: bot.metadata,
        status_changes: [],
        recordings: [],
      });
    }
    if ((m = path.match(/^\/api\/v1\/bot\/([^/]+)\/leave_call\/$/)) && req.method === 'POST') {
      const bot = bots.find((b) => b.id === m![1]);
      if (!bot) return send(404, { detail: 'Not found.' });
      if (bot.left) return send(400, { code: 'cannot_command_completed_bot' });
      bot.left = true;
      return send(200, { id: bot.id });
    }
    if ((m = path.match(/^\/api\/v1\/bot\/([^/]+)\/$/)) && req.method === 'GET') {
      const bot = bots.find((b) => b.id === m![1]);
      return bot ? send(200, { id: bot.id, recordings: bot.recordings }) : send(404, { detail: 'Not found.' });
    }
    if ((m = path.match(/^\/api\/v1\/recording\/([^/]+)\/create_transcript\/$/)) && req.method === 'POST') {
      const id = crypto.randomUUID();
      transcripts.set(id, m[1]!);
      return send(200, { id, status: { code: 'processing' }, provider: body.provider });
    }
    if ((m = path.match(/^\/api\/v1\/recording\/([^/]+)\/$/)) && req.method === 'GET') {
      const recording = bots.flatMap((b) => b.recordings).find((r) => r.id === m![1]);
      if (!recording) return send(404, { detail: 'Not found.' });
      return send(200, {
        ...recording,
        media_shortcuts: { video_mixed: { data: { download_url: `${baseUrl}/download/video/${recording.id}.mp4` } } },
      });
    }
    if ((m = path.match(/^\/api\/v1\/transcript\/([^/]+)\/$/)) && req.method === 'GET') {
      if (!transcripts.has(m[1]!)) return send(404, { detail: 'Not found.' });
      return send(200, { id: m[1], status: { code: 'done' }, data: { download_url: `${baseUrl}/download/transcript/${m[1]}` } });
    }
    send(404, { detail: 'Not found.' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    apiKey,
    bots,
    requests,
    transcripts,
    async emit(bot, event, extra = {}, opts = {}) {
      const body = JSON.stringify({
        event,
        data: {
          data: { code: opts.code ?? event.split('.')[1], sub_code: opts.sub_code ?? null, updated_at: new Date().toISOString() },
          bot: { id: bot.id, metadata: bot.metadata },
          ...extra,
        },
      });
      const id = opts.id ?? `msg_${crypto.randomUUID()}`;
      const response = await fetch(options.webhookUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...signWebhook(options.secret, id, body) },
        body,
      });
      await response.text();
      return response.status;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
