import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import { LogTimestamp, type RuntimeOptions } from '@temporalio/worker';
import { atTime, type Logger } from '../platform/core/logger';
import { outsideActivity } from './activity-log-context';

const METHODS = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const satisfies Record<LogLevel, string>;

// Temporal's attribute names that do not simply become snake_case.
const RENAMED: Record<string, string> = { sdkComponent: 'component', workflowRunId: 'run_id', error: 'err', failure: 'err' };
// The activity's task token: long, opaque, and enough to complete the task from outside.
const DROPPED = new Set(['taskToken']);
// Written by the logger itself: an attribute of the same name keeps its value under a prefixed name.
const RESERVED = new Set(['level', 'time', 'msg', 'service']);

/** `workflowId` → `workflow_id`, `sdkComponent` → `component`, `error` → `err`: the names of the service's other lines. */
export function logFieldName(key: string): string {
  const name = RENAMED[key] ?? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return RESERVED.has(name) ? `temporal_${name}` : name;
}

/**
 * Temporal's Logger over the app's pino logger: the runtime's records (the SDK's worker, workflow and
 * activity lines, and Core's, forwarded) come out as one JSON line each, at the time the event happened,
 * with snake_case fields (`workflow_id`, `run_id`, `activity_type`, `org_id`, `component`, `err`).
 */
export class PinoTemporalLogger implements TemporalLogger {
  constructor(private readonly logger: Logger) {}

  log(level: LogLevel, message: string, meta: LogMetadata = {}): void {
    const method = METHODS[level] ?? 'info';
    if (!this.logger.isLevelEnabled(method)) return;
    const fields: Record<string, unknown> = {};
    // String keys only: the LogTimestamp symbol is the event's time, not a field.
    for (const [key, value] of Object.entries(meta)) {
      if (value === undefined || DROPPED.has(key)) continue;
      if (key === 'spanContexts' && Array.isArray(value) && value.length === 0) continue;
      fields[logFieldName(key)] = value;
    }
    const nanos: unknown = meta[LogTimestamp];
    const ms = typeof nanos === 'bigint' ? Number(nanos / 1_000_000n) : undefined;
    // The runtime flushes its buffer from whatever runs: a record is never given a running activity's fields.
    outsideActivity(() => atTime(ms, () => this.logger[method](fields, message)));
  }

  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/**
 * The worker's Temporal runtime: its records, Core's included (forwarded rather than printed by Core
 * in its own format), go through the app's logger. Core logs at WARN unless LOG_LEVEL asks for debug
 * or trace; SIGINT/SIGTERM shut the worker down gracefully.
 */
export function temporalRuntimeOptions(logger: Logger): RuntimeOptions {
  const core: LogLevel = logger.level === 'trace' ? 'TRACE' : logger.level === 'debug' ? 'DEBUG' : 'WARN';
  return {
    logger: new PinoTemporalLogger(logger),
    telemetryOptions: { logging: { filter: { core, other: 'ERROR' }, forward: {} } },
    shutdownSignals: ['SIGINT', 'SIGTERM'],
  };
}
