import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { poolMonitorOf } from '../../platform/core/postgres-pool';
import { temporalReachable } from '../../platform/core/temporal';
import { PROJECT_ROOT } from '../../platform/core/tools';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';

// Liveness and readiness as `application/health+json`, in the shape of the IETF draft "Health Check
// Response Format for HTTP APIs": status pass | warn | fail, the service's version and release, and
// checks keyed `<component>:<measurement>`, each with its observed value and time.

const HEALTH_JSON = 'application/health+json';
const releaseId = (() => {
  try {
    return String(
      (JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version?: string }).version ?? '0.0.0',
    );
  } catch {
    return '0.0.0';
  }
})();
const SERVICE = { version: releaseId.split('.')[0]!, releaseId, serviceId: 'voice-crm-service' };

const Status = z.enum(['pass', 'warn', 'fail']);
const Check = z.object({
  componentType: z.string(),
  observedValue: z.number(),
  observedUnit: z.string(),
  status: Status,
  time: z.string().openapi({ description: 'When the value was observed (ISO 8601)' }),
  output: z.string().optional().openapi({ description: 'Why the check did not pass' }),
});
const HealthBody = (name: string) =>
  z
    .object({
      status: Status,
      version: z.string().openapi({ description: 'Major version of the service' }),
      releaseId: z.string().openapi({ description: 'Release of the service (package version)' }),
      serviceId: z.string(),
      description: z.string(),
      output: z.string().optional(),
      checks: z.record(z.string(), z.array(Check)),
    })
    .openapi(name);
const Liveness = HealthBody('Liveness');
const Readiness = HealthBody('Readiness');

/**
 * Resolves with the check's outcome and how long it took, or a failure once `ms` have passed, whatever
 * the dependency does.
 */
async function within(
  ms: number,
  check: Promise<unknown>,
  onLate: () => void = () => {},
): Promise<{ ok: boolean; ms: number; output?: string }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ ok: false; output: string }>((resolve) => {
    timer = setTimeout(() => {
      onLate();
      resolve({ ok: false, output: `No answer within ${ms} ms` });
    }, ms);
  });
  try {
    const outcome = await Promise.race([check.then(() => ({ ok: true as const })), late]);
    return { ...outcome, ms: Math.round(performance.now() - started) };
  } catch (error) {
    return { ok: false, ms: Math.round(performance.now() - started), output: `Failed: ${(error as Error).message}`.slice(0, 200) };
  } finally {
    clearTimeout(timer);
    check.catch(() => {});
  }
}

type Outcome = Awaited<ReturnType<typeof within>>;

function postgresReachable(deps: AppDeps, ms: number): Promise<Outcome> {
  const query = deps.sql`SELECT 1`;
  // A query still queued for a connection is dropped; one sent is left to the pool's own bounds.
  return within(ms, query.execute(), () => {
    // postgres.js answers cancel() with a promise its types omit; a failed cancel changes nothing here.
    void Promise.resolve(query.cancel() as unknown).catch(() => {});
  });
}

/** A read of a key that never exists: answers undefined when the store works, throws when it fails. */
const storageReachable = (deps: AppDeps, ms: number) => within(ms, deps.storage.head('health/readiness-probe'));

/**
 * The database pool, from memory (no query): busy connections, and `warn` once every one of them has
 * been busy for longer than any statement may run, which only transactions held open can do: requests
 * then wait for a connection (each is given back at its request's deadline, REQUEST_TIMEOUT_MS).
 */
function poolCheck(deps: AppDeps, time: string) {
  const usage = poolMonitorOf(deps.sql)?.usage();
  if (!usage) return undefined;
  const exhausted = usage.exhaustedMs > deps.config.DATABASE_STATEMENT_TIMEOUT_MS;
  const output = `Database pool exhausted: all ${usage.max} connections busy for ${Math.round(usage.exhaustedMs / 1000)} s; requests wait for a connection`;
  return [
    {
      componentType: 'datastore',
      observedValue: usage.busy,
      observedUnit: 'connections',
      status: exhausted ? ('warn' as const) : ('pass' as const),
      time,
      ...(exhausted ? { output } : {}),
    },
  ] as const;
}

/** A check passes, warns when it took more than half its bound, or fails. */
function check(componentType: string, bound: number, outcome: Outcome, time: string) {
  const status = !outcome.ok ? 'fail' : outcome.ms > bound / 2 ? 'warn' : 'pass';
  return [
    { componentType, observedValue: outcome.ms, observedUnit: 'ms', status, time, ...(outcome.output ? { output: outcome.output } : {}) },
  ] as const;
}

export function registerHealthRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/health',
    tag: 'Service Health',
    summary: 'Liveness: the process answers (touches no dependency); warn while every database connection stays busy',
    auth: 'public',
    responses: {
      200: {
        description: `Alive; \`warn\` (with \`output\`) while every connection of the database pool has been busy for over ${deps.config.DATABASE_STATEMENT_TIMEOUT_MS} ms`,
        schema: Liveness,
        contentType: HEALTH_JSON,
      },
    },
    handler: async () => {
      const time = new Date().toISOString();
      const pool = poolCheck(deps, time);
      const warn = pool?.[0].status === 'warn';
      return reply(
        200,
        {
          status: warn ? ('warn' as const) : ('pass' as const),
          ...SERVICE,
          description: 'Liveness of the API process',
          ...(warn ? { output: pool[0].output } : {}),
          checks: {
            uptime: [
              { componentType: 'system', observedValue: Math.round(process.uptime()), observedUnit: 's', status: 'pass' as const, time },
            ],
            ...(pool ? { 'postgres:connections': pool } : {}),
          },
        },
        { 'Cache-Control': 'no-store' },
        HEALTH_JSON,
      );
    },
  });

  const bound = deps.config.READY_CHECK_TIMEOUT_MS;
  routes.add({
    method: 'get',
    path: '/ready',
    tag: 'Service Health',
    summary: `Readiness: Postgres, Temporal and object storage each answer within ${bound} ms`,
    auth: 'public',
    responses: {
      200: {
        description: 'Ready: every check passes (warn: one took more than half its bound)',
        schema: Readiness,
        contentType: HEALTH_JSON,
      },
      503: {
        description: `A dependency did not answer within ${bound} ms; the checks run in parallel, so the answer comes within that bound`,
        schema: Readiness,
        contentType: HEALTH_JSON,
      },
    },
    handler: async () => {
      const [postgres, temporal, storage] = await Promise.all([
        postgresReachable(deps, bound),
        within(
          bound,
          temporalReachable(deps.temporal, bound).then((ok) => {
            if (!ok) throw new Error('Temporal did not answer GetSystemInfo');
          }),
        ),
        storageReachable(deps, bound),
      ]);
      const time = new Date().toISOString();
      const checks = {
        'postgres:responseTime': check('datastore', bound, postgres, time),
        'temporal:responseTime': check('component', bound, temporal, time),
        'objectStorage:responseTime': check('datastore', bound, storage, time),
      };
      const statuses = Object.values(checks).map((c) => c[0].status);
      const status = statuses.includes('fail') ? ('fail' as const) : statuses.includes('warn') ? ('warn' as const) : ('pass' as const);
      const failed = Object.entries(checks)
        .filter(([, c]) => c[0].status === 'fail')
        .map(([name]) => name.split(':')[0]);
      return reply(
        status === 'fail' ? 503 : 200,
        {
          status,
          ...SERVICE,
          description: 'Readiness of the API: Postgres, Temporal and object storage',
          ...(failed.length > 0 ? { output: `Not ready: ${failed.join(', ')}` } : {}),
          checks,
        },
        { 'Cache-Control': 'no-store' },
        HEALTH_JSON,
      );
    },
  });
}
