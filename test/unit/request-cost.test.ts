import Koa from 'koa';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { requestLineMiddleware } from '../support/request-line';
import { addressSubject } from '../../platform/core/client-address';
import { createLogger } from '../../platform/core/logger';

// What the request path saves must not change what it answers or writes: the request line without the
// redaction pass is the line it was, a handler's own lines are still redacted, and the memo of address
// subjects answers what working them out answers.

async function serve(level: string, handler: Koa.Middleware) {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  const app = new Koa();
  app.use(requestLineMiddleware(createLogger(level, sink)));
  app.use(handler);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await fetch(`http://127.0.0.1:${port}/things/42?q=1`, { headers: { 'X-Request-ID': 'req-7' } }).then((r) => r.text());
  await new Promise((resolve) => server.close(resolve));
  return { lines, raw };
}

describe('the request line', () => {
  it('has the same fields in the same order whether or not the handler wrote through its logger', async () => {
    const quiet = await serve('info', (ctx) => {
      ctx.body = 'ok';
    });
    const chatty = await serve('info', (ctx) => {
      ctx.state.log.info({ authorization: 'Bearer ak_secret', token: 'pat_secret' }, 'handler line');
      ctx.body = 'ok';
    });
    const shape =
      /^\{"level":30,"time":\d+,"service":"voice-crm","request_id":"req-7","method":"GET","path":"\/things\/42","status":200,"ms":\d+,"client_address":"127\.0\.0\.1","msg":"request"\}$/;
    expect(quiet.raw).toHaveLength(1);
    expect(quiet.raw[0]).toMatch(shape);
    expect(chatty.raw).toHaveLength(2);
    expect(chatty.raw[1]).toMatch(shape);
    // The handler's own line keeps the logger's redaction and its request id.
    expect(chatty.lines[0]).toMatchObject({ request_id: 'req-7', authorization: '[redacted]', token: '[redacted]', msg: 'handler line' });
    expect(chatty.raw.join('\n')).not.toContain('secret');
  });

  it('is not written at a level above info, while a warning still is', async () => {
    const { lines } = await serve('warn', (ctx) => {
      ctx.state.log.warn({ secret: 's3' }, 'careful');
      ctx.body = 'ok';
    });
    expect(lines).toEqual([expect.objectContaining({ level: 40, msg: 'careful', secret: '[redacted]', request_id: 'req-7' })]);
  });
});

describe('address subjects', () => {
  it('answer the same from memory as worked out, past the bound of addresses held', () => {
    expect(addressSubject('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressSubject('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressSubject('::ffff:198.51.100.4')).toBe('198.51.100.4');
    for (let i = 0; i < 12_000; i++)
      expect(addressSubject(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`)).toBe(`10.0.${(i >> 8) & 255}.${i & 255}`);
    // Dropped from memory by then, worked out again.
    expect(addressSubject('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressSubject('::ffff:198.51.100.4')).toBe('198.51.100.4');
    expect(addressSubject('not an address')).toBe('not an address');
  });
});
