import type { Context } from '@temporalio/activity';
import { LogTimestamp, Runtime } from '@temporalio/worker';
import Koa from 'koa';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { requestLineMiddleware } from '../support/request-line';
import { createLogger } from '../../platform/core/logger';
import { activityLogContext, activityLogFields } from '../../worker/activity-log-context';
import { PinoTemporalLogger, temporalRuntimeOptions } from '../../worker/temporal-logger';
import { interceptors as workflowLogContext } from '../../worker/workflow-log-context';

// The worker's lines and the API's lines are one format: pino JSON, one line per event, the same base
// fields and snake_case context fields.

function capture(level = 'trace', mixin?: () => Record<string, unknown>) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, logger: createLogger(level, sink, mixin ? { mixin } : {}) };
}

const parsed = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

/** One API request line, as the request-id middleware writes it. */
async function apiLine(): Promise<Record<string, unknown>> {
  const { lines, logger } = capture('info');
  const app = new Koa();
  app.use(requestLineMiddleware(logger));
  app.use((ctx) => {
    ctx.body = 'ok';
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await fetch(`http://127.0.0.1:${port}/x`, { headers: { 'X-Request-ID': 'req-1' } }).then((r) => r.text());
  await new Promise((resolve) => server.close(resolve));
  const [line] = parsed(lines);
  return line!;
}

const activityInfo = {
  workflowExecution: { workflowId: 'campaign:c1', runId: 'run-1' },
  workflowType: 'campaignWorkflow',
  activityType: 'dispatchCalls',
  activityId: '7',
  attempt: 2,
} as unknown as Context['info'];

describe('the Temporal runtime logger', () => {
  it('writes a runtime record as one JSON line with the API line fields and snake_case context', async () => {
    const { lines, logger } = capture();
    const adapter = new PinoTemporalLogger(logger);
    const at = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
    adapter.log('WARN', 'Activity failed', {
      [LogTimestamp]: BigInt(at) * 1_000_000n + 123n,
      sdkComponent: 'worker',
      namespace: 'default',
      taskQueue: 'voice-crm-main',
      workflowId: 'campaign:c1',
      workflowRunId: 'run-1',
      workflowType: 'campaignWorkflow',
      activityType: 'dispatchCalls',
      activityId: '7',
      attempt: 2,
      isLocal: false,
      taskToken: 'CiQ...',
      orgId: 'org-1',
      error: new Error('dialer unavailable'),
    });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 40,
      time: at,
      service: 'voice-crm',
      msg: 'Activity failed',
      component: 'worker',
      namespace: 'default',
      task_queue: 'voice-crm-main',
      workflow_id: 'campaign:c1',
      run_id: 'run-1',
      workflow_type: 'campaignWorkflow',
      activity_type: 'dispatchCalls',
      activity_id: '7',
      attempt: 2,
      is_local: false,
      org_id: 'org-1',
      err: { type: 'Error', message: 'dialer unavailable' },
    });
    expect(line).not.toHaveProperty('taskToken');
    expect(line).not.toHaveProperty('task_token');
    // No camelCase field names: the service's lines are snake_case.
    expect(Object.keys(line).filter((key) => /[A-Z]/.test(key))).toEqual([]);

    // The base fields are those of an API request line, with the same types.
    const api = await apiLine();
    expect(api).toMatchObject({ level: 30, service: 'voice-crm', msg: 'request', request_id: 'req-1', method: 'GET', path: '/x' });
    for (const key of ['level', 'time', 'service', 'msg']) expect(typeof line[key], key).toBe(typeof api[key]);
    for (const key of ['pid', 'hostname']) expect(key in line, key).toBe(key in api);
  });

  it('maps each Temporal level to pino, honours the logger level and keeps reserved names', () => {
    const { lines, logger } = capture('info');
    const adapter = new PinoTemporalLogger(logger);
    adapter.trace('t');
    adapter.debug('d');
    adapter.info('i', { level: 'x', time: 'y' });
    adapter.warn('w');
    adapter.error('e');
    const out = parsed(lines);
    expect(out.map((l) => [l.level, l.msg])).toEqual([
      [30, 'i'],
      [40, 'w'],
      [50, 'e'],
    ]);
    expect(out[0]).toMatchObject({ temporal_level: 'x', temporal_time: 'y' });
    expect(typeof out[0]!.time).toBe('number');
  });

  it('is the logger the runtime installs: a record logged through the runtime comes out as one JSON line', async () => {
    const { lines, logger } = capture('info');
    const options = temporalRuntimeOptions(logger);
    expect(options.telemetryOptions?.logging).toMatchObject({ forward: {}, filter: { core: 'WARN' } });
    const runtime = Runtime.install(options);
    runtime.logger.warn('Worker state changed', { sdkComponent: 'worker', taskQueue: 'q', workflowId: 'w1', runId: 'r1' });
    // The runtime buffers its records (100 ms) to order them with Core's.
    await expect.poll(() => lines.length, { timeout: 5000 }).toBe(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 40,
      service: 'voice-crm',
      msg: 'Worker state changed',
      component: 'worker',
      task_queue: 'q',
      workflow_id: 'w1',
      run_id: 'r1',
    });
  });

  afterAll(async () => {
    try {
      await Runtime.instance().shutdown();
    } catch {
      // not installed
    }
  });
});

describe('the worker log context', () => {
  it('gives the lines written while an activity runs its workflow, run, activity type and organization', async () => {
    const { lines, logger } = capture('info', activityLogFields);
    const { inbound, outbound } = activityLogContext({ info: activityInfo } as Context);
    logger.info('before');
    await inbound!.execute!({ args: [{ orgId: 'org-1', campaignId: 'c1' }], headers: {} }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      logger.info({ calls: 3 }, 'dispatched');
      return undefined;
    });
    logger.info('after');
    const [before, inside, after] = parsed(lines);
    expect(before).not.toHaveProperty('workflow_id');
    expect(inside).toMatchObject({
      msg: 'dispatched',
      calls: 3,
      workflow_id: 'campaign:c1',
      run_id: 'run-1',
      workflow_type: 'campaignWorkflow',
      activity_type: 'dispatchCalls',
      activity_id: '7',
      attempt: 2,
      org_id: 'org-1',
    });
    expect(after).not.toHaveProperty('org_id');
    // The SDK's own activity lines (Context.log, lifecycle) get the organization too.
    expect(outbound!.getLogAttributes!({ activityType: 'dispatchCalls' }, (a) => a)).toEqual({
      activityType: 'dispatchCalls',
      orgId: 'org-1',
    });
  });

  it('leaves the organization out when the input has none', async () => {
    const { lines, logger } = capture('info', activityLogFields);
    const { inbound, outbound } = activityLogContext({ info: activityInfo } as Context);
    await inbound!.execute!({ args: ['not an object'], headers: {} }, async () => logger.info('x'));
    expect(parsed(lines)[0]).not.toHaveProperty('org_id');
    expect(outbound!.getLogAttributes!({}, (a) => a)).toEqual({});
  });

  it('does not give a runtime record the fields of the activity running when it is flushed', async () => {
    const { lines, logger } = capture('info', activityLogFields);
    const adapter = new PinoTemporalLogger(logger);
    const { inbound } = activityLogContext({ info: activityInfo } as Context);
    await inbound!.execute!({ args: [{ orgId: 'org-1' }], headers: {} }, async () => adapter.warn('from Core', { sdkComponent: 'core' }));
    const [line] = parsed(lines);
    expect(line).toMatchObject({ msg: 'from Core', component: 'core' });
    expect(line).not.toHaveProperty('workflow_id');
    expect(line).not.toHaveProperty('org_id');
  });

  it('adds the organization of a workflow input to its workflow.log attributes', async () => {
    const { inbound, outbound } = workflowLogContext();
    const attributes = { workflowId: 'campaign:c1', runId: 'run-1', workflowType: 'campaignWorkflow' };
    expect(outbound![0]!.getLogAttributes!(attributes, (a) => a)).toEqual(attributes);
    await inbound![0]!.execute!({ args: [{ orgId: 'org-9' }], headers: {} }, async () => undefined);
    expect(outbound![0]!.getLogAttributes!(attributes, (a) => a)).toEqual({ ...attributes, orgId: 'org-9' });
  });
});
