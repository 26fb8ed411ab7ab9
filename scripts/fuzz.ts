import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ALL_SCOPES } from '../api/auth/scopes';
import { freePort } from '../dev-servers/ports';
import { PROJECT_ROOT } from '../platform/core/tools';

// `npm run fuzz`: starts the whole service the way `npm start` does, on a fresh DATA_DIR and free ports,
// mints a development session and an `ak_` key of every scope, and runs Schemathesis (pinned, from
// .tools/venv) over the live /openapi.json with `--checks all` and every phase (examples, coverage,
// fuzzing, stateful), a bounded number of examples per operation and a fixed seed. Exits non-zero on any
// finding not in KNOWN_FINDINGS below. Settings: test/contract/schemathesis.toml; FUZZ_MAX_EXAMPLES and
// FUZZ_SEED override the defaults, extra arguments go to `st run`.
const say = (line: string) => process.stdout.write(`[fuzz] ${line}\n`);
const MAX_EXAMPLES = process.env.FUZZ_MAX_EXAMPLES ?? '15';
const SEED = process.env.FUZZ_SEED ?? '1';
const STARTUP_TIMEOUT_MS = 180_000;

/**
 * The only findings a run may report, each with its reason: a rule JSON Schema cannot state (cross-field or
 * semantic, checked by the route after the schema), so a schema-valid request may be refused with one of the
 * statuses named (positive_data_acceptance); or a 404 the API contract gives for something the item's operation
 * names besides the item (a row a PATCH body refers to, a readiness profile not computed yet), which the stateful
 * phase reads as the item just created gone (ensure_resource_availability, named by the create: Schemathesis gives
 * it no signature and `--checks all` overrides a per-operation `enabled = false`, so it cannot be narrowed to the
 * operation that answered 404). They become the run's `--baseline` (one entry per operation, check and status);
 * any other finding fails the run. The same list is in docs/decisions/testing.md ("Fuzzing"); an entry the run did
 * not meet is counted, not a failure.
 */
type Rule = { ids: string[]; check?: 'ensure_resource_availability'; statuses?: number[]; reason: string };
const KNOWN_FINDINGS: Rule[] = [
  { ids: ['createCampaignCampaign'], statuses: [422], reason: "a calling window's start is before its end" },
  {
    ids: ['createCampaignCampaignContact'],
    statuses: [422],
    reason: 'a contact added to a campaign without an agent names its own (the stored campaign decides)',
  },
  {
    ids: ['createOutreachMailbox', 'patchOutreachMailbox'],
    statuses: [400, 422],
    reason: 'send_gap min <= max, a sending window that starts before it ends, an SMTP host that answers',
  },
  {
    ids: ['createIntelligenceIcpProfile', 'patchIntelligenceIcpProfile'],
    statuses: [422],
    reason: 'ICP ranges run min <= max, known countries and industries (the weight rule is in the document)',
  },
  { ids: ['getCardEventsSummary', 'getCardShareLinkEventsSummary'], statuses: [422], reason: 'from <= to, at most 366 days per summary' },
  {
    ids: ['createOutreachSequencerSequence', 'patchOutreachSequencerSequence'],
    statuses: [422],
    reason: "template variables the service knows ({{name}}); the first step's subject is in the document",
  },
  {
    ids: ['patchWorkflowCredential'],
    statuses: [400, 422],
    reason: "a refresh policy or input needs the credential's refresher workflow (the stored one), cron fields Temporal reads",
  },
  {
    ids: ['createWorkflowCredential', 'updateWorkflowCredentialValue'],
    statuses: [400, 422],
    reason: "a value of at most 65,536 bytes as JSON, the refresher's own input schema, cron fields Temporal reads",
  },
  { ids: ['createOrganizationPat', 'createUserPat', 'createCardShareLink'], statuses: [422], reason: 'expiry instants in the future' },
  { ids: ['listAgents'], statuses: [400], reason: 'the metadata filter is JSON-encoded' },
  {
    ids: ['createAnalyticsAssistantQuery', 'createAnalyticsAssistantQuestion'],
    statuses: [400],
    reason: 'SQL the analytics guard accepts and the database can run',
  },
  { ids: ['createContactsImport'], statuses: [400], reason: 'known CSV columns' },
  {
    ids: ['createIntegrationsConnectToken'],
    statuses: [400],
    reason: "integrations the deployment configures (INTEGRATION_PROVIDERS), the organization's OAuth client, allowed redirect origins",
  },
  {
    ids: ['updateCustomDataTable', 'replaceCustomDataTable'],
    statuses: [400, 422],
    reason: 'key columns among the properties and of a key type, properties named once, rows holding the key, calendar dates',
  },
  {
    ids: [
      'publishAgentVersion',
      'createPhoneNumber',
      'createDoNotCall',
      'getDoNotCall2',
      'deleteDoNotCall',
      'createIntegrationsTelephonyAccount',
      'updateIntegrationsTelephonyAccount',
    ],
    statuses: [422],
    reason: "phone numbers valid for their region (libphonenumber's metadata); the document's pattern is only their shape",
  },
  {
    ids: ['createIntegrationsSpeechAccount', 'updateIntegrationsSpeechAccount'],
    statuses: [400],
    reason: 'an API key the provider accepts (the fuzzer points the providers at a server that refuses every key)',
  },
  {
    ids: ['createAgentVersion', 'updateAgentVersion'],
    statuses: [400, 422],
    reason: 'unique tool names, URLs a URL parser takes, a published version is not changed (400)',
  },
  {
    ids: ['createAgentVersionGenerateInstruction', 'createIntelligenceResearchRun', 'createKnowledgeBaseSource'],
    statuses: [400, 422],
    reason: 'the inputs needed to generate, exactly one of several fields',
  },
  {
    ids: ['createCard', 'createShareLead', 'createAgentWidget', 'createFolder'],
    statuses: [400, 422],
    reason:
      'names trimmed before their length is checked, a name or an email; with the Idempotency-Key header the coverage phase sends a body of 0 as valid data',
  },
  {
    ids: ['createTag', 'createAgent', 'createAccount', 'createDeal', 'createKnowledgeBaseDataset'],
    statuses: [422],
    reason:
      'names trimmed before their length is checked (the document states the trimmed rule as a pattern); with the Idempotency-Key header the coverage phase sends a body of 0 as valid data',
  },
  {
    ids: [
      'createDeal',
      'createContact',
      'createCard',
      'createFolder',
      'createKnowledgeBaseDataset',
      'createIntelligenceIcpProfile',
      'createAccount',
      'createWorkflowCredential',
    ],
    check: 'ensure_resource_availability',
    reason:
      "a PATCH naming a row the organization lacks (a contact, account, media key) is 404 for that row; an account's readiness is 404 until computed",
  },
];

const st = path.join(PROJECT_ROOT, '.tools', 'venv', 'bin', 'st');
if (!fs.existsSync(st)) {
  say('schemathesis not found; installing it (scripts/install-tools.sh schemathesis)');
  const installed = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-tools.sh'), 'schemathesis'], { stdio: 'inherit' });
  if (installed.status !== 0 || !fs.existsSync(st)) {
    say('could not install schemathesis (needs python3 and PyPI)');
    process.exit(1);
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'voice-crm-fuzz-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const env: NodeJS.ProcessEnv = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: String(port),
  HOST: '127.0.0.1',
  TEMPORAL_UI_PORT: String(await freePort()),
  LOG_LEVEL: 'fatal',
  NODE_ENV: 'development',
  // Configured fully, so signed callbacks answer as in production instead of 503 "not configured".
  DIALER_CALLBACK_SECRET: crypto.randomBytes(24).toString('hex'),
  MEETING_WEBHOOK_SECRETS: `whsec_${crypto.randomBytes(24).toString('base64')}`,
  OUTREACH_INBOUND_SECRETS: `whsec_${crypto.randomBytes(24).toString('base64')}`,
  DIALER_SIMULATED_LATENCY_MS: '200',
  // AI chat turns run on the local model here: one model call each keeps the fuzzer's CPU for the others.
  AI_CHAT_MAX_STEPS: '1',
  // The fuzzer's thousands of requests from one key would spend a default quota in a minute and meet only
  // 429s after it: quotas far above its rate (the limiter still runs; its own tests cover the 429).
  RATE_LIMIT_KEY_REQUESTS: '100000000',
  RATE_LIMIT_ORG_REQUESTS: '100000000',
};
// The telephony providers (Twilio, Vapi) as they answer keys they do not know: 401 to every request, so
// connecting a telephony account is refused (400), never a 502 from a provider this machine cannot reach.
const refusingProvider = http.createServer((_req, res) => {
  res.writeHead(401, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ code: 20003, message: 'Authenticate', status: 401 }));
});
await new Promise<void>((resolve) => refusingProvider.listen(0, '127.0.0.1', resolve));
refusingProvider.unref();
env.TWILIO_API_BASE_URL = env.VAPI_API_BASE_URL = `http://127.0.0.1:${(refusingProvider.address() as AddressInfo).port}`;
// The speech and model providers' key checks likewise (POST /integrations/speech-accounts).
for (const name of ['DEEPGRAM_API_BASE_URL', 'ELEVENLABS_API_BASE_URL', 'CARTESIA_API_BASE_URL'])
  env[name] = `http://127.0.0.1:${(refusingProvider.address() as AddressInfo).port}`;
env.OPENAI_API_BASE_URL = `http://127.0.0.1:${(refusingProvider.address() as AddressInfo).port}/v1`;
// A fresh service of our own: never one the caller's environment points at.
for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'S3_ENDPOINT', 'S3_BUCKET', 'IDP_JWKS_URL', 'PUBLIC_BASE_URL']) delete env[name];

const logFile = path.join(dataDir, 'service.log');
const log = fs.openSync(logFile, 'a');
const service: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'scripts', 'start.ts')], {
  cwd: PROJECT_ROOT,
  env,
  stdio: ['ignore', log, log],
});
const serviceEnded = new Promise<void>((resolve) => service.once('exit', () => resolve()));

let stopping = false;
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    if (service.exitCode === null && service.signalCode === null) {
      service.kill('SIGINT');
      const force = setTimeout(() => service.kill('SIGKILL'), 30_000);
      await serviceEnded;
      clearTimeout(force);
    }
    if (code !== 0) {
      const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-40).join('\n');
      process.stderr.write(`[fuzz] last lines of the service's output:\n${tail}\n`);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(130));
process.on('SIGTERM', () => void stop(143));

async function waitForHealth(): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (service.exitCode !== null) throw new Error('the service exited during start');
    if (
      await fetch(`${base}/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the service was not ready within ${STARTUP_TIMEOUT_MS / 1000} s`);
}

try {
  say(`starting the service on ${base} (DATA_DIR ${dataDir})`);
  await waitForHealth();

  const session = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(PROJECT_ROOT, 'scripts', 'cli.ts'), 'session', '--user', 'fuzz-user', '--org', 'fuzz-org'],
    {
      cwd: PROJECT_ROOT,
      env,
      encoding: 'utf8',
    },
  );
  if (session.status !== 0) throw new Error(`cli session failed: ${session.stderr}`);
  const sessionToken = session.stdout.trim();
  const created = await fetch(`${base}/organization-pats`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sessionToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'fuzz', scopes: ALL_SCOPES }),
  });
  if (created.status !== 200) throw new Error(`POST /organization-pats answered ${created.status}: ${await created.text()}`);
  const { pat_key: apiKey, scopes } = (await created.json()) as { pat_key: string; scopes: string[] };
  // Every operation is reachable: a missing scope would turn its checks into 403s that prove nothing.
  if ([...scopes].sort().join() !== [...ALL_SCOPES].sort().join())
    throw new Error(`the ak_ key got the scopes ${scopes.join(' ')}, not every scope`);

  // Operations the document reserves to sessions or to users (session or pat_) get the session; all others the ak_ key.
  const document = (await fetch(`${base}/openapi.json`).then((r) => r.json())) as {
    paths: Record<
      string,
      Record<string, { operationId?: string; security?: Record<string, string[]>[]; responses?: Record<string, unknown> }>
    >;
  };
  const operations = Object.values(document.paths).flatMap((item) => Object.values(item));
  const idsOf = (matching: (op: (typeof operations)[number]) => boolean) =>
    operations
      .filter(matching)
      .map((op) => op.operationId)
      .filter((id): id is string => !!id);
  const sessionOnly = idsOf((op) => !!op.security?.length && op.security.every((s) => 'sessionAuth' in s || 'userAuth' in s));
  // A declared 503 is the designed end of a bounded wait (Temporal's answer past its deadline, a readiness
  // check): on a busy machine it is the service's answer, not a server error. 500, 502 and undeclared statuses
  // are still failures.
  const declares503 = idsOf((op) => !!op.responses && '503' in op.responses);

  const config = path.join(dataDir, 'schemathesis.toml');
  let toml = fs.readFileSync(path.join(PROJECT_ROOT, 'test', 'contract', 'schemathesis.toml'), 'utf8');
  if (sessionOnly.length) {
    toml += `\n[[operations]]\ninclude-operation-id = ${JSON.stringify(sessionOnly)}\nheaders = { Authorization = "Bearer \${FUZZ_SESSION_TOKEN}" }\n`;
  }
  if (declares503.length) {
    toml += `\n[[operations]]\ninclude-operation-id = ${JSON.stringify(declares503)}\nchecks.not_a_server_error.expected-statuses = ["2XX", "3XX", "4XX", "503"]\n`;
  }
  fs.writeFileSync(config, toml);

  const baseline = path.join(dataDir, 'known-findings.json');
  const labels = new Map(
    Object.entries(document.paths).flatMap(([p, item]) =>
      Object.entries(item).map(([method, op]) => [op.operationId, `${method.toUpperCase()} ${p}`] as const),
    ),
  );
  const entries = KNOWN_FINDINGS.flatMap((rule) =>
    rule.ids.flatMap((id) => {
      const operation = labels.get(id);
      if (!operation) throw new Error(`KNOWN_FINDINGS names ${id}, which the document does not have`);
      return rule.check === 'ensure_resource_availability'
        ? [{ operation, check: rule.check, failure: 'EnsureResourceAvailability', signature: '', reason: rule.reason }]
        : (rule.statuses ?? []).map((status) => ({
            operation,
            check: 'positive_data_acceptance',
            failure: 'RejectedPositiveData',
            signature: String(status),
            reason: rule.reason,
          }));
    }),
  );
  fs.writeFileSync(baseline, JSON.stringify({ format_version: 1, entries }, null, 2));
  const report = path.join(dataDir, 'report.json');

  const args = [
    '--config-file',
    config,
    'run',
    `${base}/openapi.json`,
    '--url',
    base,
    '--checks',
    'all',
    '--phases',
    'examples,coverage,fuzzing,stateful',
    '--baseline',
    baseline,
    '--report',
    'json',
    '--report-json-path',
    report,
    '--max-examples',
    MAX_EXAMPLES,
    '--seed',
    SEED,
    ...process.argv.slice(2),
  ];
  say(`st ${args.join(' ')}`);
  const run = spawn(st, args, {
    cwd: dataDir, // its cache of found failures stays out of the work tree
    env: {
      ...process.env,
      FUZZ_API_KEY: apiKey,
      FUZZ_SESSION_TOKEN: sessionToken,
      NO_COLOR: '1',
      // The cross-field and time-relative rules, taught to the fuzzer's positive cases (test/contract/fuzz_hooks.py).
      SCHEMATHESIS_HOOKS: 'fuzz_hooks',
      PYTHONPATH: path.join(PROJECT_ROOT, 'test', 'contract'),
    },
    stdio: 'inherit',
  });
  const code = await new Promise<number>((resolve) => run.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  say(code === 0 ? 'schemathesis: no findings but the known ones' : `schemathesis exited with ${code}`);
  reportKnown(report, entries);
  await stop(code);
} catch (error) {
  say(`could not run: ${(error as Error).message}`);
  await stop(1);
}

/** Which listed findings the run met (each one of the rules above), by the report's baseline ids. */
function reportKnown(
  file: string,
  entries: { operation: string; check: string; failure: string; signature: string; reason: string }[],
): void {
  if (!fs.existsSync(file)) return;
  const { baseline } = JSON.parse(fs.readFileSync(file, 'utf8')) as { baseline?: { known_ids?: string[] } | null };
  const met = new Set(baseline?.known_ids ?? []);
  const idOf = (e: (typeof entries)[number]) =>
    crypto.createHash('sha256').update([e.operation, e.check, e.failure, e.signature].join('\0')).digest('hex').slice(0, 6);
  const seen = entries.filter((e) => met.has(idOf(e)));
  say(`known findings met: ${seen.length} (of ${entries.length} listed)`);
  for (const e of seen) say(`  ${e.operation} ${e.check} ${e.signature}: ${e.reason}`);
}
