import pino from 'pino';

export interface LoggerOptions {
  /** Fields added to every line, computed when the line is written (the worker's activity context). */
  mixin?: () => Record<string, unknown>;
}

// The time of the event being written, when it happened before the line is written (Temporal's runtime
// buffers its records for ordering); otherwise the line's own time.
let eventTime: number | undefined;

/** Writes with `time` set to `ms` (epoch milliseconds) instead of now: `write` must log synchronously. */
export function atTime<T>(ms: number | undefined, write: () => T): T {
  const previous = eventTime;
  eventTime = ms;
  try {
    return write();
  } finally {
    eventTime = previous;
  }
}

// Structured JSON logs, one line per event: `level` (pino's number), `time` (epoch ms), `service`,
// `msg`, `err` for an error, and snake_case context fields (`request_id` on the API's lines;
// `workflow_id`, `run_id`, `activity_type`, `org_id` on the worker's). Anything that could carry a secret
// is redacted at the logger, so a careless log line cannot leak a bearer token or a credential value.
export function createLogger(
  level: string = process.env.LOG_LEVEL ?? 'info',
  destination?: pino.DestinationStream,
  options: LoggerOptions = {},
) {
  return pino(
    {
      level,
      base: { service: 'voice-crm' },
      timestamp: () => `,"time":${Math.round(eventTime ?? Date.now())}`,
      ...(options.mixin ? { mixin: options.mixin } : {}),
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          'authorization',
          'token',
          'secret',
          'pat_key',
          'value',
          '*.token',
          '*.secret',
          '*.pat_key',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

export type Logger = ReturnType<typeof createLogger>;
