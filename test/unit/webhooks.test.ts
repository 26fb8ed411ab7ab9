import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { NOTIFICATION_EVENTS } from '../../domain/notification-events';
import {
  DEFAULT_RETRY_DELAYS_SECONDS,
  WEBHOOK_EVENT_NAMES,
  failedLongEnough,
  isDelivered,
  messageIdFrom,
  retryDelayMs,
  uuidFromMessageId,
} from '../../domain/webhooks';
import { CreateEndpointBody } from '../../api/schemas/webhooks';
import { newSecret, signatureHeader } from '../../services/webhooks/secrets';

describe('the retry schedule', () => {
  it("is Svix's: 5 s, 5 min, 30 min, 2 h, 5 h, then 10 h, about three days in all", () => {
    expect(DEFAULT_RETRY_DELAYS_SECONDS.slice(0, 6)).toEqual([5, 300, 1800, 7200, 18_000, 36_000]);
    const total = DEFAULT_RETRY_DELAYS_SECONDS.reduce((a, b) => a + b, 0) / 86_400;
    expect(total).toBeGreaterThan(2.8);
    expect(total).toBeLessThan(3.3);
  });

  it('gives the delay after each failed attempt, then null once spent', () => {
    expect(retryDelayMs([5, 300], 1)).toBe(5000);
    expect(retryDelayMs([5, 300], 2)).toBe(300_000);
    expect(retryDelayMs([5, 300], 3)).toBeNull();
    expect(retryDelayMs([0.25], 1)).toBe(250);
  });
});

describe('disabling and delivery', () => {
  it('disables only a streak at least as old as the bound', () => {
    const now = new Date('2030-01-06T00:00:00Z');
    expect(failedLongEnough(null, now, 5 * 86_400)).toBe(false);
    expect(failedLongEnough(new Date('2030-01-01T00:00:01Z'), now, 5 * 86_400)).toBe(false);
    expect(failedLongEnough(new Date('2030-01-01T00:00:00Z'), now, 5 * 86_400)).toBe(true);
  });

  it('counts 2xx only as delivered', () => {
    expect([199, 200, 204, 299, 301, 400, 500].map(isDelivered)).toEqual([false, true, true, true, false, false, false]);
  });
});

describe('messages', () => {
  it('spell a uuid as msg_ and 32 hex digits, and back', () => {
    const uuid = '0190f3c2-a1b2-7c3d-8e4f-5a6b7c8d9e0f';
    expect(messageIdFrom(uuid)).toBe('msg_0190f3c2a1b27c3d8e4f5a6b7c8d9e0f');
    expect(uuidFromMessageId(messageIdFrom(uuid))).toBe(uuid);
  });

  it('are signed so that the standardwebhooks package verifies them, with either secret during a rotation', () => {
    const [old, current] = [newSecret(), newSecret()];
    const body = JSON.stringify({ id: 'msg_1', type: 'deal.won', timestamp: '2030-01-01T00:00:00.000Z', data: { a: 1 } });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader([current, old], 'msg_1', timestamp, body),
    };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [old, current]) expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow();
  });
});

describe('the event type catalog', () => {
  it('holds every notification event, then the webhook-only ones, once each', () => {
    expect(WEBHOOK_EVENT_NAMES.slice(0, NOTIFICATION_EVENTS.length)).toEqual(NOTIFICATION_EVENTS.map((e) => e.event_type));
    expect(new Set(WEBHOOK_EVENT_NAMES).size).toBe(WEBHOOK_EVENT_NAMES.length);
    expect(WEBHOOK_EVENT_NAMES).toEqual(expect.arrayContaining(['call.ended', 'knowledge_source.ingested', 'webhook_endpoint.disabled']));
  });
});

describe('endpoint URLs', () => {
  const takes = (url: string) => CreateEndpointBody.safeParse({ url }).success;
  it('take http(s) URLs with a host name or an IPv4 address, a port and any path', () => {
    for (const url of [
      'https://hooks.example.com',
      'http://127.0.0.1:8080/h?x=1#f',
      'https://a-b.c.example.co.uk/p/%20q',
      'https://h.example:65535/',
    ])
      expect(takes(url), url).toBe(true);
  });
  it('refuse other schemes, credentials, spaces, bad ports, numeric last labels and anything URL cannot parse', () => {
    for (const url of [
      'ftp://x.example',
      'https://u:p@x.example',
      'https://x.example/a b',
      'https://x.example:65536',
      'https://1.2.3.4.5',
      'https://999',
      'https:///x',
      'https://x.0x10',
    ])
      expect(takes(url), url).toBe(false);
  });
  it('are those the URL parser takes, over 2,000 generated ones', () => {
    const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
    for (let i = 0; i < 2000; i++) {
      const url = `${pick(['http', 'https'])}://${pick(['a', 'x-y', '1a', 'b1', '9', '0x1', '255', '300'])}${pick(['', '.example', '.1', '.0x2', '.c0m'])}${pick(['', ':0', ':80', ':99999'])}${pick(['', '/', '/p?q#f', '/%zz'])}`;
      if (takes(url)) expect(() => new URL(url), url).not.toThrow();
    }
  });
});
