// The Helm chart (helm/cubicle) against the real test API server: rendered by helm v3.22 (built
// from the Go module proxy, scripts/lib/helm-tools.mjs) and every object sent as a server-side
// dry run with strict field validation — the only check that catches unknown fields and
// out-of-range values (`helm template --validate` and client-node do not). Then the worker's
// RBAC for real: a sandbox provisioned with nothing but the chart's ServiceAccount token.
import { spawnSync } from 'node:child_process';
import type { V1PodSpec, V1SecurityContext } from '@kubernetes/client-node';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildSandboxNetworkPolicy,
  buildSandboxPod,
  createKubeClient,
  createKubernetesBackend,
  loadKubeConfig,
  networkPolicyOptionsOf,
  selectorMatches,
} from '@cubicle/backends';
import { KUBE_TOOL_VERSIONS } from '../../scripts/lib/kube-paths.mjs';
import {
  createObject,
  discoverResources,
  rawClient,
  strictDryRun,
  type KubeObject,
  type RawClient,
} from '../harness/kube/dry-run.js';
import { helm, parseManifests, requireHelm } from '../harness/kube/helm.js';
import { writeKubeconfigFile } from '../harness/kube/kubeconfig.js';
import { startKubeCluster, startNodeAgent, type KubeCluster } from '../harness/kube/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const chart = join(root, 'helm/cubicle');
const RELEASE = 'cubicle';

interface Container {
  name: string;
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }[];
  [key: string]: unknown;
}
interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: { containers: Container[]; serviceAccountName?: string; [key: string]: unknown };
}

const kindsOf = (objects: KubeObject[]) =>
  objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
const find = (objects: KubeObject[], kind: string, name: string) => {
  const obj = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!obj)
    throw new Error(`${kind}/${name} is not in the rendered chart: ${kindsOf(objects).join(', ')}`);
  return obj;
};
const podTemplate = (obj: KubeObject) => (obj.spec as { template: PodTemplate }).template;
const envOf = (obj: KubeObject, container = 0) =>
  new Map((podTemplate(obj).spec.containers[container]!.env ?? []).map((e) => [e.name, e]));
/** policyOptionsOf reads the worker's rendered env the way the worker does (apps/worker/src/backends.ts). */
const policyOptionsOf = (worker: KubeObject) => {
  const env = envOf(worker);
  return networkPolicyOptionsOf({
    controlPlaneSelector: env.get('KUBE_CONTROL_PLANE_SELECTOR')!.value!,
    controlPlaneNamespace: env.get('KUBE_CONTROL_PLANE_NAMESPACE')?.value,
    egress: env.get('KUBE_SANDBOX_EGRESS')?.value as 'internet' | 'none' | undefined,
    deniedEgressCidrs: env.get('KUBE_DENIED_EGRESS_CIDRS')?.value,
  });
};

describe('Helm chart helm/cubicle on the real test API server', () => {
  let cluster: KubeCluster;
  let client: RawClient;
  let index: Awaited<ReturnType<typeof discoverResources>>;
  const scratch = mkdtempSync(join(tmpdir(), 'cubicle-chart-'));

  /** render runs `helm template` in `namespace` with these values files and `--set` pairs. */
  function render(namespace: string, files: string[], set: string[] = [], chartDir = chart) {
    const result = helm([
      'template',
      RELEASE,
      chartDir,
      '--namespace',
      namespace,
      '--kube-version',
      KUBE_TOOL_VERSIONS.kubeApiserver,
      ...files.flatMap((f) => ['-f', f]),
      ...set.flatMap((s) => ['--set', s]),
    ]);
    return { ...result, objects: result.code === 0 ? parseManifests(result.stdout) : [] };
  }

  /** Namespaces first (as helm installs them), each for real; then every object as a strict dry run. */
  async function dryRunAll(objects: KubeObject[], namespace: string) {
    const refused: string[] = [];
    for (const ns of objects.filter((o) => o.kind === 'Namespace')) {
      const dry = await strictDryRun(client, index, ns, namespace);
      if (dry.status !== 201)
        refused.push(`Namespace/${ns.metadata.name}: ${dry.status} ${dry.body}`);
      const created = await createObject(client, index, ns, namespace);
      expect([201, 409]).toContain(created.status);
    }
    for (const obj of objects.filter((o) => o.kind !== 'Namespace')) {
      const answer = await strictDryRun(client, index, obj, namespace);
      if (answer.status !== 201 || answer.warnings.length > 0)
        refused.push(
          `${obj.kind}/${obj.metadata.name}: ${answer.status} ${answer.body.slice(0, 400)}`,
        );
    }
    return refused;
  }

  beforeAll(async () => {
    requireHelm();
    cluster = await startKubeCluster();
    client = rawClient(cluster);
    index = await discoverResources(client);
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('passes helm lint --strict with the default and the production-like values', () => {
    for (const values of ['ci/default-values.yaml', 'ci/production-values.yaml']) {
      const lint = helm([
        'lint',
        chart,
        '--strict',
        '--kube-version',
        KUBE_TOOL_VERSIONS.kubeApiserver,
        '-f',
        join(chart, values),
      ]);
      expect(lint.stdout + lint.stderr, values).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(lint.code).toBe(0);
    }
  });

  it('the values reference (helm/cubicle/values-reference.md) is generated from the current schema', () => {
    const check = spawnSync(
      process.execPath,
      [join(root, 'helm/values-reference.mjs'), '--check'],
      {
        encoding: 'utf8',
      },
    );
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
    const reference = readFileSync(join(chart, 'values-reference.md'), 'utf8');
    const schema = JSON.parse(readFileSync(join(chart, 'values.schema.json'), 'utf8')) as {
      properties: Record<string, unknown>;
    };
    for (const key of Object.keys(schema.properties)) expect(reference).toContain(`| \`${key}\``);
  });

  it('default values: every rendered object passes a strict server-side dry run', async () => {
    const namespace = await cluster.createNamespace('cubicle-rel-');
    const { code, stderr, objects } = render(namespace, [join(chart, 'ci/default-values.yaml')]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(kindsOf(objects)).toEqual(
      [
        'Deployment/cubicle-api',
        'Deployment/cubicle-egress',
        'Deployment/cubicle-web',
        'Deployment/cubicle-worker',
        'Job/cubicle-migrate',
        'Namespace/cubicle-sandboxes',
        'PodDisruptionBudget/cubicle-api',
        'PodDisruptionBudget/cubicle-worker',
        'Role/cubicle-egress',
        'Role/cubicle-egress-reader',
        'Role/cubicle-worker',
        'RoleBinding/cubicle-egress',
        'RoleBinding/cubicle-egress-reader',
        'RoleBinding/cubicle-worker',
        'Secret/cubicle-keys',
        'Service/cubicle-api',
        'Service/cubicle-egress',
        'Service/cubicle-web',
        'ServiceAccount/cubicle',
        'ServiceAccount/cubicle-egress',
        'ServiceAccount/cubicle-worker',
      ].sort(),
    );
    expect(await dryRunAll(objects, namespace)).toEqual([]);
  });

  it('production-like values (Ingress, HPAs, KubeVirt, existing Secrets): all accepted', async () => {
    const namespace = await cluster.createNamespace('cubicle-prod-');
    const { code, stderr, objects } = render(namespace, [join(chart, 'ci/production-values.yaml')]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const kinds = kindsOf(objects);
    for (const expected of [
      'Ingress/cubicle',
      'HorizontalPodAutoscaler/cubicle-api',
      'HorizontalPodAutoscaler/cubicle-worker',
      'PodDisruptionBudget/cubicle-web',
      'Namespace/cubicle-sandboxes-prod',
    ])
      expect(kinds).toContain(expected);
    // Keys and connection strings come from the operator's Secrets: the chart makes none.
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    // The viewer stream path reaches the API.
    const ingress = find(objects, 'Ingress', 'cubicle') as unknown as {
      spec: {
        rules: {
          host: string;
          http: { paths: { path: string; backend: { service: { name: string } } }[] };
        }[];
      };
    };
    const apiRule = ingress.spec.rules.find((r) => r.host === 'api.cubicle.example.com');
    expect(
      apiRule?.http.paths.find((p) => p.path === '/v1/viewer/stream')?.backend.service.name,
    ).toBe('cubicle-api');
    const role = find(objects, 'Role', 'cubicle-worker') as unknown as {
      rules: { apiGroups: string[]; resources: string[] }[];
    };
    expect(role.rules.some((r) => r.apiGroups.includes('kubevirt.io'))).toBe(true);
    expect(
      envOf(find(objects, 'Deployment', 'cubicle-worker')).get('CUBICLE_BACKENDS')?.value,
    ).toBe('kubernetes,kubevirt');
    expect(await dryRunAll(objects, namespace)).toEqual([]);
  });

  it('trying-out values (inline URLs, in-chart PostgreSQL and Redis): all accepted', async () => {
    const namespace = await cluster.createNamespace('cubicle-try-');
    const { code, stderr, objects } = render(
      namespace,
      [],
      [
        'database.inChart.enabled=true',
        'redis.inChart.enabled=true',
        `sandboxes.namespace=${namespace}`,
      ],
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const kinds = kindsOf(objects);
    for (const expected of [
      'StatefulSet/cubicle-postgresql',
      'Deployment/cubicle-redis',
      'Secret/cubicle-connections',
      'Secret/cubicle-postgresql',
    ])
      expect(kinds).toContain(expected);
    // The sandbox namespace is the release's own: no Namespace object, no cross-namespace selector.
    expect(kinds.filter((k) => k.startsWith('Namespace/'))).toEqual([]);
    expect(
      envOf(find(objects, 'Deployment', 'cubicle-worker')).has('KUBE_CONTROL_PLANE_NAMESPACE'),
    ).toBe(false);
    // With the in-chart database the migration runs after it exists (post-install).
    expect(find(objects, 'Job', 'cubicle-migrate').metadata.annotations).toMatchObject({
      'helm.sh/hook': 'post-install,pre-upgrade',
    });
    expect(await dryRunAll(objects, namespace)).toEqual([]);
  });

  it('a planted unknown field and an out-of-range port are refused by the strict dry run, though helm renders them', async () => {
    const namespace = await cluster.createNamespace('cubicle-bad-');
    const planted = join(scratch, 'planted');
    cpSync(chart, planted, { recursive: true });
    const apiTemplate = join(planted, 'templates/api.yaml');
    const text = readFileSync(apiTemplate, 'utf8');
    const withUnknown = text.replace(
      '          imagePullPolicy: {{ .Values.image.pullPolicy }}\n',
      '          imagePullPolicy: {{ .Values.image.pullPolicy }}\n          restartPolicyy: Always\n',
    );
    const withBoth = withUnknown.replace(
      '      port: {{ $v.port }}\n      targetPort: http',
      '      port: 70000\n      targetPort: http',
    );
    expect(withBoth).not.toBe(withUnknown);
    expect(withUnknown).not.toBe(text);
    writeFileSync(apiTemplate, withBoth);
    const { code, objects } = render(
      namespace,
      [join(chart, 'ci/default-values.yaml')],
      [],
      planted,
    );
    expect(code).toBe(0); // helm itself has no objection
    const deployment = await strictDryRun(
      client,
      index,
      find(objects, 'Deployment', 'cubicle-api'),
      namespace,
    );
    expect(deployment.status).toBe(400);
    const message = (answer: { json: unknown }) => (answer.json as { message: string }).message;
    expect(message(deployment)).toContain(
      'strict decoding error: unknown field "spec.template.spec.containers[0].restartPolicyy"',
    );
    const service = await strictDryRun(
      client,
      index,
      find(objects, 'Service', 'cubicle-api'),
      namespace,
    );
    expect(service.status).toBe(422);
    expect(message(service)).toMatch(/spec\.ports\[0\]\.port: Invalid value: 70000/);
    // The untouched objects of the same render still pass.
    expect(
      (await strictDryRun(client, index, find(objects, 'Deployment', 'cubicle-worker'), namespace))
        .status,
    ).toBe(201);
  });

  it('values.schema.json refuses a bad values file, naming the mistake', () => {
    const bad = (name: string, yaml: string) => {
      const file = join(scratch, `${name}.yaml`);
      writeFileSync(file, yaml);
      return render('default', [join(chart, 'ci/default-values.yaml'), file]);
    };
    const typo = bad('typo', 'api:\n  replica: 3\n');
    expect(typo.code).not.toBe(0);
    expect(typo.stderr).toMatch(/values don't meet the specifications of the schema/);
    expect(typo.stderr).toMatch(/api.*additional properties 'replica' not allowed/);
    const port = bad('port', 'api:\n  port: 70000\n');
    expect(port.code).not.toBe(0);
    expect(port.stderr).toMatch(/api\/port|api\.port/);
    expect(port.stderr).toMatch(/maximum/);
    const backend = bad('backend', 'sandboxes:\n  backends: [docker]\n');
    expect(backend.code).not.toBe(0);
    expect(backend.stderr).toMatch(/backends/);
    const namespace = bad('namespace', 'sandboxes:\n  namespace: Not_A_Namespace\n');
    expect(namespace.code).not.toBe(0);
    // No database at all: the chart refuses to render instead of shipping a crash-looping release.
    const none = render('default', []);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/database: set database\.existingSecret/);
    // The good file of the same test passes (the failures above are the planted values).
    expect(render('default', [join(chart, 'ci/default-values.yaml')]).code).toBe(0);
  });

  it('object store: fs mounts one volume in api and worker; s3 reads its keys from a Secret; s3 without bucket or Secret is refused', async () => {
    const defaults = join(chart, 'ci/default-values.yaml');
    const volumesOf = (obj: KubeObject) =>
      podTemplate(obj).spec.volumes as { name: string; [k: string]: unknown }[];
    const fsNamespace = await cluster.createNamespace('cubicle-objects-');
    const fs = render(fsNamespace, [defaults], ['objectStore.fs.existingClaim=shared-objects']);
    expect(fs.code).toBe(0);
    for (const name of ['cubicle-api', 'cubicle-worker']) {
      const deployment = find(fs.objects, 'Deployment', name);
      expect(envOf(deployment).get('CUBICLE_OBJECT_STORE')?.value).toBe('fs');
      expect(envOf(deployment).get('CUBICLE_OBJECT_STORE_DIR')?.value).toBe(
        '/var/lib/cubicle/objects',
      );
      expect(volumesOf(deployment).find((v) => v.name === 'objects')).toEqual({
        name: 'objects',
        persistentVolumeClaim: { claimName: 'shared-objects' },
      });
    }
    // The Deployments with the claim's volume pass the API server's strict validation.
    for (const name of ['cubicle-api', 'cubicle-worker']) {
      const deployment = find(fs.objects, 'Deployment', name);
      expect((await strictDryRun(client, index, deployment, fsNamespace)).status).toBe(201);
    }

    const s3Set = [
      'objectStore.kind=s3',
      'objectStore.s3.endpoint=https://minio.example:9000',
      'objectStore.s3.bucket=cubicle-objects',
      'objectStore.s3.credentialsSecret=s3-keys',
    ];
    const s3 = render('default', [defaults], s3Set);
    expect(s3.code).toBe(0);
    for (const name of ['cubicle-api', 'cubicle-worker']) {
      const deployment = find(s3.objects, 'Deployment', name);
      const env = envOf(deployment);
      expect(env.get('CUBICLE_OBJECT_STORE')?.value).toBe('s3');
      expect(env.get('CUBICLE_S3_BUCKET')?.value).toBe('cubicle-objects');
      expect(env.get('CUBICLE_S3_ENDPOINT')?.value).toBe('https://minio.example:9000');
      expect(env.get('CUBICLE_S3_FORCE_PATH_STYLE')?.value).toBe('1');
      expect(env.get('CUBICLE_S3_ACCESS_KEY_ID')?.valueFrom?.secretKeyRef).toEqual({
        name: 's3-keys',
        key: 'access-key-id',
      });
      expect(env.get('CUBICLE_S3_SECRET_ACCESS_KEY')?.value).toBeUndefined();
      expect(volumesOf(deployment).some((v) => v.name === 'objects')).toBe(false);
    }
    const missing = render('default', [defaults], ['objectStore.kind=s3']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/objectStore\/s3\/bucket/);
    expect(missing.stderr).toMatch(/objectStore\/s3\/credentialsSecret/);
  });

  it('secrets live in Secrets only, are read through secretKeyRef, and are generated once (lookup)', async () => {
    const namespace = await cluster.createNamespace('cubicle-keys-');
    const { objects } = render(namespace, [join(chart, 'ci/default-values.yaml')]);
    expect(objects.filter((o) => o.kind === 'ConfigMap')).toEqual([]);
    const secretEnv = [
      'DATABASE_URL',
      'REDIS_URL',
      'CUBICLE_KEYRING',
      'CUBICLE_VIEWER_KEY_PEM',
      'CUBICLE_WEB_SESSION_SECRET',
      'API_METRICS_TOKEN',
    ];
    for (const obj of objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job'))
      for (const container of podTemplate(obj).spec.containers)
        for (const env of container.env ?? [])
          if (secretEnv.includes(env.name)) {
            expect(env.value, `${obj.metadata.name} ${env.name}`).toBeUndefined();
            expect(env.valueFrom?.secretKeyRef?.name).toMatch(/^cubicle-(keys|database|redis)$/);
          }
    const keys = find(objects, 'Secret', 'cubicle-keys') as unknown as {
      data: Record<string, string>;
      metadata: { annotations: Record<string, string> };
    };
    const keyring = Buffer.from(keys.data.keyring!, 'base64').toString();
    expect(keyring).toMatch(/^k1:[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(keyring.slice(3), 'base64')).toHaveLength(32);
    // The session key is stored as the dashboard reads it: 32 bytes, base64.
    const session = Buffer.from(keys.data['session-secret']!, 'base64').toString();
    expect(Buffer.from(session, 'base64')).toHaveLength(32);
    expect(Buffer.from(keys.data['metrics-token']!, 'base64').toString()).toMatch(
      /^[A-Za-z0-9]{40}$/,
    );
    expect(Buffer.from(keys.data['viewer-key.pem']!, 'base64').toString()).toMatch(
      /^-----BEGIN PRIVATE KEY-----/,
    );
    expect(keys.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    // Install the generated keys for real; a render against the cluster (lookup) keeps them.
    expect(
      (await createObject(client, index, keys as unknown as KubeObject, namespace)).status,
    ).toBe(201);
    const again = helm(
      [
        'template',
        RELEASE,
        chart,
        '--namespace',
        namespace,
        '--dry-run=server',
        '--kube-version',
        KUBE_TOOL_VERSIONS.kubeApiserver,
        '-f',
        join(chart, 'ci/default-values.yaml'),
      ],
      { KUBECONFIG: cluster.kubeconfigPath },
    );
    expect(again.stderr).toBe('');
    const kept = find(parseManifests(again.stdout), 'Secret', 'cubicle-keys') as unknown as {
      data: Record<string, string>;
    };
    expect(kept.data).toEqual(keys.data);
    // Without the cluster (no lookup) a render makes new keys: lookup is what keeps them.
    expect(
      find(
        render(namespace, [join(chart, 'ci/default-values.yaml')]).objects,
        'Secret',
        'cubicle-keys',
      ),
    ).not.toEqual(keys);
  });

  it('metrics stay off every Service, and the Ingress passes the largest body an operation accepts', () => {
    const { objects } = render('cubicle', [join(chart, 'ci/production-values.yaml')]);
    const api = podTemplate(find(objects, 'Deployment', 'cubicle-api')).spec.containers[0]!;
    const metricsPort = (
      api as unknown as { ports: { name: string; containerPort: number }[] }
    ).ports.find((p) => p.name === 'metrics')?.containerPort;
    expect(metricsPort).toBe(9464);
    expect(envOf(find(objects, 'Deployment', 'cubicle-api')).get('API_METRICS_PORT')?.value).toBe(
      '9464',
    );
    // Its series name tenants and pools: no Service may route to it (by number or by name).
    for (const svc of objects.filter((o) => o.kind === 'Service')) {
      const ports = (svc as unknown as { spec: { ports: { port: number; targetPort: unknown }[] } })
        .spec.ports;
      for (const port of ports) {
        expect(port.targetPort, svc.metadata.name).not.toBe('metrics');
        expect(port.targetPort, svc.metadata.name).not.toBe(9464);
        expect(port.port, svc.metadata.name).not.toBe(9464);
      }
    }
    // The Ingress must not cut a body the API accepts (x-cubicle-max-body-bytes per operation).
    const openapi = JSON.parse(
      readFileSync(
        fileURLToPath(new URL('../../packages/contract/openapi.json', import.meta.url)),
        'utf8',
      ),
    ) as { paths: Record<string, Record<string, { 'x-cubicle-max-body-bytes'?: number }>> };
    const largest = Math.max(
      ...Object.values(openapi.paths).flatMap((ops) =>
        Object.values(ops).map((op) => op['x-cubicle-max-body-bytes'] ?? 0),
      ),
    );
    expect(largest).toBeGreaterThan(1024 * 1024);
    const ingress = find(objects, 'Ingress', 'cubicle') as unknown as {
      metadata: { annotations: Record<string, string> };
    };
    const size = /^(\d+)m$/.exec(
      ingress.metadata.annotations['nginx.ingress.kubernetes.io/proxy-body-size']!,
    );
    expect(Number(size?.[1]) * 1024 * 1024).toBeGreaterThanOrEqual(largest);
  });

  it('the sandbox NetworkPolicy admits only the api and worker Pods: not web, the migration Job, PostgreSQL or Redis', async () => {
    // The trying-out render: every Pod kind the chart can run, in-chart datastores included.
    const { objects } = render(
      'cubicle-system',
      [],
      ['database.inChart.enabled=true', 'redis.inChart.enabled=true'],
    );
    const worker = find(objects, 'Deployment', 'cubicle-worker');
    const env = envOf(worker);
    const policy = buildSandboxNetworkPolicy({
      namespace: env.get('KUBE_NAMESPACE')!.value!,
      ...policyOptionsOf(worker),
    });
    expect(policy.spec.ingress).toHaveLength(1);
    expect(policy.spec.ingress[0]!.from).toHaveLength(1);
    const peer = policy.spec.ingress[0]!.from[0]!;
    expect(peer.namespaceSelector?.matchLabels['kubernetes.io/metadata.name']).toBe(
      'cubicle-system',
    );
    const admits = (obj: KubeObject) =>
      selectorMatches(peer.podSelector, podTemplate(obj).metadata.labels);
    expect(admits(find(objects, 'Deployment', 'cubicle-api'))).toBe(true);
    expect(admits(worker)).toBe(true);
    // Every other Pod the chart runs has no business with a sandbox.
    for (const [kind, name] of [
      ['Deployment', 'cubicle-web'],
      ['Job', 'cubicle-migrate'],
      ['StatefulSet', 'cubicle-postgresql'],
      ['Deployment', 'cubicle-redis'],
    ] as const)
      expect(admits(find(objects, kind, name)), `${kind}/${name}`).toBe(false);
    // Another release's api, and the sandboxes' own Pods, do not match either.
    const apiLabels = podTemplate(find(objects, 'Deployment', 'cubicle-api')).metadata.labels;
    expect(
      selectorMatches(peer.podSelector, { ...apiLabels, 'app.kubernetes.io/instance': 'other' }),
    ).toBe(false);
    expect(selectorMatches(peer.podSelector, policy.spec.podSelector.matchLabels)).toBe(false);
    // The policy the worker would apply is valid for the API server (strict dry run).
    const sandboxNs = await cluster.createNamespace('cubicle-np-');
    const answer = await strictDryRun(
      client,
      index,
      {
        ...policy,
        metadata: { ...policy.metadata, namespace: sandboxNs },
      } as unknown as KubeObject,
      sandboxNs,
    );
    expect(answer.status, answer.body).toBe(201);
    expect(answer.warnings).toEqual([]);
    // The worker's Role lives in the namespace it drives, bound to its own account.
    expect(find(objects, 'Role', 'cubicle-worker').metadata.namespace).toBe(
      env.get('KUBE_NAMESPACE')!.value,
    );
    expect(podTemplate(worker).spec.serviceAccountName).toBe('cubicle-worker');
    expect(
      podTemplate(find(objects, 'Deployment', 'cubicle-api')).spec.automountServiceAccountToken,
    ).toBe(false);
  });

  it('by default sandboxes reach only the egress point, and pools without a policy get none', () => {
    const worker = find(
      render('cubicle', [join(chart, 'ci/default-values.yaml')]).objects,
      'Deployment',
      'cubicle-worker',
    );
    const env = envOf(worker);
    expect(env.get('KUBE_EGRESS_POINT_SERVICE')?.value).toBe('cubicle-egress');
    expect(env.get('CUBICLE_EGRESS_DEFAULT')?.value).toBe('none');
    const policy = buildSandboxNetworkPolicy({
      namespace: 'sbx',
      ...networkPolicyOptionsOf({
        controlPlaneSelector: env.get('KUBE_CONTROL_PLANE_SELECTOR')!.value!,
        controlPlaneNamespace: env.get('KUBE_CONTROL_PLANE_NAMESPACE')?.value,
        egress: env.get('KUBE_SANDBOX_EGRESS')?.value as 'internet' | 'none' | undefined,
        deniedEgressCidrs: env.get('KUBE_DENIED_EGRESS_CIDRS')?.value,
        egressPointSelector: env.get('KUBE_EGRESS_POINT_SELECTOR')?.value,
        egressPointNamespace: env.get('KUBE_EGRESS_POINT_NAMESPACE')?.value,
        egressPointPorts: {
          dns: Number(env.get('KUBE_EGRESS_POINT_DNS_PORT')!.value),
          proxy: Number(env.get('KUBE_EGRESS_POINT_PROXY_PORT')!.value),
        },
      }),
    });
    // No ipBlock anywhere: the point's Pods are the only peer sandboxes may send to.
    const peers = policy.spec.egress.flatMap((rule) => rule.to);
    expect(peers.length).toBeGreaterThan(0);
    expect(peers.some((peer) => 'ipBlock' in peer)).toBe(false);
    // The one line that opens the default pool reaches the api, the worker and the point.
    const opened = render(
      'cubicle',
      [join(chart, 'ci/default-values.yaml')],
      ['egress.default=open'],
    ).objects;
    for (const name of ['cubicle-api', 'cubicle-worker', 'cubicle-egress'])
      expect(envOf(find(opened, 'Deployment', name)).get('CUBICLE_EGRESS_DEFAULT')?.value).toBe(
        'open',
      );
  });

  it('egress mode and denied CIDRs are values; the IPv6 deny list holds NAT64, 6to4 and Teredo', () => {
    const policyOf = (set: string[]) => {
      const worker = find(
        render(
          'cubicle',
          [join(chart, 'ci/default-values.yaml')],
          ['sandboxes.egress.mode=internet', ...set],
        ).objects,
        'Deployment',
        'cubicle-worker',
      );
      return buildSandboxNetworkPolicy({ namespace: 'sbx', ...policyOptionsOf(worker) });
    };
    const defaults = policyOf([]);
    const blocks = defaults.spec.egress[0]!.to.flatMap((peer) =>
      'ipBlock' in peer ? [peer.ipBlock] : [],
    );
    const v6 = blocks.find((b) => b.cidr === '::/0')!.except!;
    for (const cidr of ['64:ff9b::/96', '64:ff9b:1::/48', '2002::/16', '2001::/32', 'fc00::/7'])
      expect(v6, cidr).toContain(cidr);
    expect(blocks.find((b) => b.cidr === '0.0.0.0/0')!.except).toContain('169.254.0.0/16');

    const extra = policyOf([
      'sandboxes.egress.deniedCidrs={203.0.113.7/32,2001:db8:1::/48}',
    ]).spec.egress[0]!.to.flatMap((peer) => ('ipBlock' in peer ? [peer.ipBlock] : []));
    expect(extra.find((b) => b.cidr === '0.0.0.0/0')!.except).toContain('203.0.113.7/32');
    expect(extra.find((b) => b.cidr === '::/0')!.except).toContain('2001:db8:1::/48');

    const none = policyOf(['sandboxes.egress.mode=none']);
    expect(none.spec.policyTypes).toContain('Egress');
    expect(none.spec.egress).toEqual([]);
    // The schema refuses a mode it does not know.
    const bad = render(
      'cubicle',
      [join(chart, 'ci/default-values.yaml')],
      ['sandboxes.egress.mode=everything'],
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/egress/);
  });

  it('the sandbox namespace carries Pod Security Admission labels: restricted, privileged only for KubeVirt', () => {
    const labelsOf = (files: string[], set: string[] = []) =>
      find(render('cubicle-system', files, set).objects, 'Namespace', 'cubicle-sandboxes').metadata
        .labels as Record<string, string>;
    expect(labelsOf([join(chart, 'ci/default-values.yaml')])).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/enforce-version': 'latest',
      'pod-security.kubernetes.io/warn': 'restricted',
      'pod-security.kubernetes.io/audit': 'restricted',
    });
    // virt-launcher Pods are privileged: KubeVirt needs the namespace to allow them.
    expect(
      labelsOf(
        [join(chart, 'ci/default-values.yaml')],
        ['sandboxes.backends={kubernetes,kubevirt}'],
      ),
    ).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'privileged',
      'pod-security.kubernetes.io/warn': 'restricted',
    });
    expect(
      labelsOf([join(chart, 'ci/default-values.yaml')], ['sandboxes.podSecurity.enforce=baseline']),
    ).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'baseline' });
  });

  it("the sandbox Pod passes the namespace's restricted Pod Security; a weakened one is refused", async () => {
    const releaseNs = await cluster.createNamespace('cubicle-psa-');
    const sandboxNs = `${releaseNs}-sbx`;
    const { objects } = render(
      releaseNs,
      [join(chart, 'ci/default-values.yaml')],
      [`sandboxes.namespace=${sandboxNs}`],
    );
    const namespace = find(objects, 'Namespace', sandboxNs);
    expect((await createObject(client, index, namespace, releaseNs)).status).toBe(201);
    const worker = find(objects, 'Deployment', 'cubicle-worker');
    const sandboxPod = buildSandboxPod(
      {
        sandboxId: 'sbx_01jxpsa0000000000000000000',
        tenantId: 'ten_01jxtesttenant000000000000',
        poolId: 'pool_01jxtestpool00000000000000',
        image: 'cubicle/desktop:test',
        cpuMillis: 500,
        memoryMb: 1024,
        env: {},
      },
      {
        namespace: sandboxNs,
        ephemeralStorageMb: Number(envOf(worker).get('KUBE_SANDBOX_EPHEMERAL_STORAGE_MB')!.value),
      },
    );
    const pod = sandboxPod as unknown as KubeObject;
    const accepted = await strictDryRun(client, index, pod, sandboxNs);
    expect(accepted.status, accepted.body).toBe(201);
    expect(accepted.warnings).toEqual([]);
    // The same Pod without what `restricted` demands is refused by admission.
    const weaken = (edit: (pod: V1PodSpec, container: V1SecurityContext) => void) => {
      const copy = structuredClone(sandboxPod);
      edit(copy.spec!, copy.spec!.containers[0]!.securityContext!);
      return copy as unknown as KubeObject;
    };
    for (const [what, weakened] of [
      [
        'no seccomp profile',
        weaken((spec, container) => {
          delete spec.securityContext!.seccompProfile;
          delete container.seccompProfile;
        }),
      ],
      [
        'privilege escalation',
        weaken((_, container) => (container.allowPrivilegeEscalation = true)),
      ],
      ['a capability', weaken((_, container) => (container.capabilities = { add: ['NET_RAW'] }))],
      [
        'root',
        weaken((spec, container) => {
          spec.securityContext = { ...spec.securityContext, runAsNonRoot: false, runAsUser: 0 };
          delete container.runAsNonRoot;
          delete container.runAsUser;
        }),
      ],
    ] as const) {
      const refused = await strictDryRun(client, index, weakened, sandboxNs);
      expect(refused.status, what).toBe(403);
      expect((refused.json as { message: string }).message, what).toMatch(
        /violates PodSecurity "restricted:latest"/,
      );
    }
  });

  it("the worker provisions, claims and destroys a sandbox Pod with only the chart's RBAC (its own token)", async () => {
    const releaseNs = await cluster.createNamespace('cubicle-ctl-');
    const sandboxNs = await cluster.createNamespace('cubicle-sbx-');
    const { objects } = render(
      releaseNs,
      [join(chart, 'ci/default-values.yaml')],
      [`sandboxes.namespace=${sandboxNs}`, 'sandboxes.createNamespace=false'],
    );
    for (const obj of objects.filter((o) =>
      ['ServiceAccount', 'Role', 'RoleBinding'].includes(o.kind),
    )) {
      const created = await createObject(client, index, obj, releaseNs);
      expect(created.status, created.body).toBe(201);
    }
    // The token the kubelet would mount into the worker Pod (TokenRequest, bound to the account).
    const tokenAnswer = await client.request(
      'POST',
      `/api/v1/namespaces/${releaseNs}/serviceaccounts/cubicle-worker/token`,
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      },
    );
    expect(tokenAnswer.status).toBe(201);
    const token = (tokenAnswer.json as { status: { token: string } }).status.token;
    const asWorker = rawClient(cluster, token);
    // Nothing outside the sandbox namespace, nothing cluster-wide.
    expect((await asWorker.request('GET', `/api/v1/namespaces/${releaseNs}/secrets`)).status).toBe(
      403,
    );
    expect((await asWorker.request('GET', '/api/v1/pods')).status).toBe(403);
    expect((await asWorker.request('GET', '/api/v1/namespaces')).status).toBe(403);
    expect(
      (await asWorker.request('GET', `/api/v1/namespaces/${sandboxNs}/configmaps`)).status,
    ).toBe(403);

    const env = envOf(find(objects, 'Deployment', 'cubicle-worker'));
    const kubeconfigPath = join(scratch, 'worker-kubeconfig');
    writeKubeconfigFile(
      kubeconfigPath,
      cluster.server,
      token,
      readFileSync(join(cluster.dir, 'certs', 'apiserver.crt'), 'utf8'),
    );
    const kubeClient = createKubeClient(loadKubeConfig({ kubeconfigPath }));
    const warnings: string[] = [];
    const backend = createKubernetesBackend({
      client: kubeClient,
      namespace: env.get('KUBE_NAMESPACE')!.value!,
      networkPolicy: policyOptionsOf(find(objects, 'Deployment', 'cubicle-worker')),
      onWarning: (msg, err) => warnings.push(`${msg}: ${String(err)}`),
    });
    const agent = await startNodeAgent({
      kubeconfig: cluster.kubeconfig,
      namespace: sandboxNs,
      withKubevirt: false,
    });
    try {
      await agent.synced;
      const sandboxId = 'sbx_01jxhelmrbac0000000000000a';
      const provisioned = await backend.provision({
        sandboxId,
        tenantId: 'ten_01jxtesttenant000000000000',
        poolId: 'pool_01jxtestpool00000000000000',
        image: 'cubicle/desktop:test',
        cpuMillis: 500,
        memoryMb: 1024,
        env: {},
        signal: AbortSignal.timeout(90_000),
      });
      expect(provisioned.guestUrl).toMatch(/^http:\/\/127\./);
      expect(await backend.list()).toContain(sandboxId);
      await backend.markClaimed(sandboxId);
      const pod = await client.request(
        'GET',
        `/api/v1/namespaces/${sandboxNs}/pods/${provisioned.ref}`,
      );
      expect(
        (pod.json as { metadata: { labels: Record<string, string> } }).metadata.labels[
          'cubicle.dev/state'
        ],
      ).toBe('claimed');
      const policy = await client.request(
        'GET',
        `/apis/networking.k8s.io/v1/namespaces/${sandboxNs}/networkpolicies/cubicle-sandboxes`,
      );
      expect(policy.status).toBe(200);
      await backend.destroy(sandboxId);
      const gone = await client.request(
        'GET',
        `/api/v1/namespaces/${sandboxNs}/pods/${provisioned.ref}`,
      );
      expect([404, 200]).toContain(gone.status);
      expect(warnings.filter((w) => /403|forbidden/i.test(w))).toEqual([]);
    } finally {
      await backend.close();
      kubeClient.close();
      await agent.stop();
    }
  }, 150_000);
});
