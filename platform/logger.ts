import pino from 'pino';

// Structured JSON logs. Anything that could carry a secret is redacted at the logger, so a careless
// log line cannot leak a bearer token or a credential value.
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', destination?: pino.DestinationStream) {
  return pino(
    {
      level,
      base: { service: 'voice-crm' },
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
