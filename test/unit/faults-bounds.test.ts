import net from 'node:net';
import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/core/config';
import { DATABASE_RESPONSE_TIMEOUT, watchedSocket } from '../../platform/core/postgres-watchdog';
import { deadlineInterceptor, isTemporalUnavailable, withRequestDeadline } from '../../platform/core/temporal';

const grpcError = (code: number) => Object.assign(new Error(`${code} grpc`), { code, details: 'x', metadata: {} });

describe('Temporal bounds', () => {
  it('recognizes a deadline or an unreachable server through the SDK wrappers, and nothing else', () => {
    expect(isTemporalUnavailable(grpcError(4))).toBe(true);
    expect(isTemporalUnavailable(new ServiceError('start failed', { cause: grpcError(4) }))).toBe(true);
    expect(isTemporalUnavailable(new ServiceError('start failed', { cause: grpcError(14) }))).toBe(true);
    expect(isTemporalUnavailable(new WorkflowUpdateRPCTimeoutOrCancelledError('timeout', { cause: grpcError(4) }))).toBe(true);
    expect(isTemporalUnavailable(new ServiceError('bad request', { cause: grpcError(3) }))).toBe(false);
    expect(isTemporalUnavailable(new Error('a bug'))).toBe(false);
  });

  it('gives a call without a deadline one, keeps a deadline already set, and leaves long polls alone', () => {
    const interceptor = deadlineInterceptor(5000);
    const seen: unknown[] = [];
    const next = ((options: { deadline?: unknown }) => (seen.push(options.deadline), {})) as never;
    const call = (method: string, deadline?: number) =>
      interceptor({ method_definition: { path: `/temporal.api.workflowservice.v1.WorkflowService/${method}` }, deadline } as never, next);
    const before = Date.now();
    call('StartWorkflowExecution');
    call('SignalWorkflowExecution', 42);
    call('GetWorkflowExecutionHistory');
    call('PollWorkflowExecutionUpdate');
    expect(seen[0]).toBeGreaterThanOrEqual(before + 5000);
    expect(seen[0]).toBeLessThan(before + 6000);
    expect(seen.slice(1)).toEqual([42, undefined, undefined]);
  });

  it('gives every call of one request, long polls included, the deadline set by its first call', async () => {
    const interceptor = deadlineInterceptor(60_000);
    const seen: number[] = [];
    const next = ((options: { deadline: number }) => (seen.push(options.deadline), {})) as never;
    const call = (method: string) =>
      interceptor({ method_definition: { path: `/temporal.api.workflowservice.v1.WorkflowService/${method}` } } as never, next);
    await withRequestDeadline(2000, async () => {
      const before = Date.now();
      call('StartWorkflowExecution');
      await new Promise((r) => setImmediate(r));
      call('PollWorkflowExecutionUpdate');
      call('GetWorkflowExecutionHistory');
      expect(seen[0]).toBeGreaterThanOrEqual(before + 2000);
      expect(seen[0]).toBeLessThan(before + 3000);
      expect(new Set(seen).size).toBe(1);
    });
  });
});

describe('configuration of the bounds', () => {
  const base = { NODE_ENV: 'test' } as NodeJS.ProcessEnv;
  it('has defaults of a few seconds', () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({
      TEMPORAL_REQUEST_TIMEOUT_MS: 5000,
      DATABASE_CONNECT_TIMEOUT_MS: 5000,
      DATABASE_STATEMENT_TIMEOUT_MS: 10_000,
      DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: 15_000,
      DATABASE_RESPONSE_TIMEOUT_MS: 12_000,
      REQUEST_TIMEOUT_MS: 60_000,
      READY_CHECK_TIMEOUT_MS: 2000,
      S3_SOCKET_TIMEOUT_MS: 10_000,
    });
  });

  it('refuses a watchdog shorter than the statement timeout, and a transaction limit shorter than the Temporal one', () => {
    expect(() => loadConfig({ ...base, DATABASE_STATEMENT_TIMEOUT_MS: '20000' })).toThrow(
      'DATABASE_RESPONSE_TIMEOUT_MS must exceed DATABASE_STATEMENT_TIMEOUT_MS',
    );
    expect(() => loadConfig({ ...base, TEMPORAL_REQUEST_TIMEOUT_MS: '20000' })).toThrow(
      'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS must exceed TEMPORAL_REQUEST_TIMEOUT_MS',
    );
    expect(() => loadConfig({ ...base, DATABASE_CONNECT_TIMEOUT_MS: 'soon' })).toThrow('DATABASE_CONNECT_TIMEOUT_MS');
    expect(() => loadConfig({ ...base, REQUEST_TIMEOUT_MS: '12000' })).toThrow(
      'REQUEST_TIMEOUT_MS must exceed DATABASE_RESPONSE_TIMEOUT_MS',
    );
  });
});

describe('the Postgres socket watchdog', () => {
  let server: net.Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  /** A TCP peer that answers the startup with `answer` and then stays silent, as a frozen server would. */
  async function silentPeer(answer: Buffer): Promise<number> {
    server = net.createServer((socket) => {
      socket.once('data', () => socket.write(answer));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return (server.address() as net.AddressInfo).port;
  }
  const message = (type: string, body = Buffer.alloc(0)) => {
    const head = Buffer.alloc(5);
    head.write(type, 0);
    head.writeUInt32BE(body.length + 4, 1);
    return Buffer.concat([head, body]);
  };
  const startup = () => {
    const b = Buffer.alloc(8);
    b.writeUInt32BE(8, 0);
    b.writeUInt32BE(196608, 4);
    return b;
  };

  it('closes a connection whose server owes an answer and sends nothing, with its own error code', async () => {
    const port = await silentPeer(message('Z', Buffer.from('I')));
    const socket = watchedSocket({ host: ['127.0.0.1'], port: [port] }, 300);
    const started = Date.now();
    const failed = new Promise<Error>((resolve) => socket.on('error', resolve));
    socket.write(startup());
    await new Promise((r) => socket.once('data', r)); // ReadyForQuery: nothing owed, idle is fine
    socket.write(Buffer.concat([message('Q', Buffer.from('SELECT 1\0'))]));
    const error = await failed;
    expect((error as Error & { code?: string }).code).toBe(DATABASE_RESPONSE_TIMEOUT);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(socket.destroyed).toBe(true);
  });
});
