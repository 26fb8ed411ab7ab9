import path from 'node:path';
import { z } from 'zod';

// Every setting the service reads, validated once at start. A bad value stops the start with one line
// naming the variable (see formatConfigError).

/** An integer setting; every way of getting it wrong gets the same one-line message. */
const intIn = (min: number, max: number) => {
  const error = `must be an integer between ${min} and ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};
const bool = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1');
const port = intIn(1, 65535);
const optionalUrl = z.url().optional();

const schema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: port.default(8000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('.data'),
  PUBLIC_BASE_URL: optionalUrl,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: intIn(1024, 100 * 1024 * 1024).default(5 * 1024 * 1024),

  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').optional(),
  DATABASE_POOL_MAX: intIn(1, 200).default(10),

  TEMPORAL_ADDRESS: z.string().regex(/^[^\s:]+:\d+$/, 'must be host:port').optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('voice-crm-main'),
  TEMPORAL_TLS_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().optional(),
  TEMPORAL_TLS_CA_PATH: z.string().optional(),
  TEMPORAL_CLI_PATH: z.string().optional(),
  TEMPORAL_UI_PORT: port.default(8233),

  S3_ENDPOINT: optionalUrl,
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_BUCKET: z.string().min(3).default('service-files'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool.default(true),

  ENCRYPTION_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (32 bytes)')
    .optional(),
  IDP_JWKS_URL: optionalUrl,
  IDP_ISSUER: z.string().min(1).optional(),
  IDP_AUDIENCE: z.string().min(1).optional(),
  TOKEN_CACHE_TTL_SECONDS: intIn(0, 3600).default(30),
  ACCESS_TOKEN_TTL_SECONDS: intIn(60, 86400).default(900),

  LLM_BASE_URL: optionalUrl,
  LLM_API_KEY: z.string().optional(),
  LLM_MODEL: z.string().optional(),
  EMBEDDINGS_BASE_URL: optionalUrl,
  EMBEDDINGS_MODEL: z.string().optional(),
  SIP_HOST: z.string().min(1).default('sip.localhost'),
  // Campaigns: the dialer, its signed call-event callback and the per-organization dispatcher.
  DIALER: z.enum(['simulated']).default('simulated'),
  DIALER_SIMULATED_LATENCY_MS: intIn(0, 3_600_000).default(3000),
  DIALER_SIMULATED_OUTCOMES: z.string().regex(/^(completed|no_answer|busy|failed):\d+(\.\d+)?(,(completed|no_answer|busy|failed):\d+(\.\d+)?)*$/, 'must look like completed:0.8,no_answer:0.2').default('completed:0.8,no_answer:0.15,busy:0.05'),
  DIALER_CALLBACK_SECRET: z.string().min(16).optional(),
  CAMPAIGN_DEFAULT_CONCURRENCY: intIn(0, 10000).default(10),
  CAMPAIGN_DISPATCH_PAGE_SIZE: intIn(1, 5000).default(500),
  CAMPAIGN_SWEEP_INTERVAL_SECONDS: intIn(1, 3600).default(30),
  CAMPAIGN_CALL_TIMEOUT_SECONDS: intIn(5, 86400).default(3600),
  CAMPAIGN_HISTORY_LIMIT: intIn(20, 50_000).default(5000),
  WEB_FETCH_ALLOW_PRIVATE: bool.default(false), // tests only: let scaffolding fetch 127.0.0.1 sites
});

export type Config = z.infer<typeof schema> & { dataDir: string };

export class ConfigError extends Error {}

export function formatConfigError(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const name = issue.path.join('.') || 'environment';
  return `Invalid configuration: ${name} ${issue.message}`;
}

/** Parses the given environment (process.env by default); throws ConfigError with one line on a bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const blankAsUnset = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(blankAsUnset);
  if (!parsed.success) throw new ConfigError(formatConfigError(parsed.error));
  const config = parsed.data;
  const idp = [config.IDP_JWKS_URL, config.IDP_ISSUER, config.IDP_AUDIENCE];
  if (idp.some(Boolean) && !idp.every(Boolean)) {
    throw new ConfigError('Invalid configuration: IDP_JWKS_URL, IDP_ISSUER and IDP_AUDIENCE must be set together');
  }
  if (config.NODE_ENV === 'production' && !config.IDP_JWKS_URL) {
    throw new ConfigError(
      'Invalid configuration: IDP_JWKS_URL is required when NODE_ENV=production (the development identity provider is refused)',
    );
  }
  if (config.NODE_ENV === 'production' && config.WEB_FETCH_ALLOW_PRIVATE) {
    throw new ConfigError('Invalid configuration: WEB_FETCH_ALLOW_PRIVATE must not be set when NODE_ENV=production');
  }
  if (config.S3_ENDPOINT && !(config.S3_ACCESS_KEY_ID && config.S3_SECRET_ACCESS_KEY)) {
    throw new ConfigError('Invalid configuration: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required with S3_ENDPOINT');
  }
  return { ...config, dataDir: path.resolve(config.DATA_DIR) };
}

/** The base of URLs the service hands out (local-storage upload and download links). */
export function publicBaseUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>): string {
  return config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`;
}

export function requireDatabaseUrl(config: Pick<Config, 'DATABASE_URL'>): string {
  if (!config.DATABASE_URL) throw new ConfigError('Invalid configuration: DATABASE_URL is required (npm start provides an embedded Postgres)');
  return config.DATABASE_URL;
}

/** For process entry points: load the config or print the one line and exit. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
