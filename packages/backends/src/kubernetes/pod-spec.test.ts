import { describe, expect, it } from 'vitest';
import { buildSandboxPod } from './pod-spec.js';
import { isPodLive, podReadiness } from './pod-status.js';

const template = {
  sandboxId: 'sbx_01jx0000000000000000000000',
  tenantId: 'ten_01jx0000000000000000000001',
  poolId: 'pool_01jx000000000000000000002',
  image: 'registry.example/cubicle/desktop:1.2.3',
  cpuMillis: 1500,
  memoryMb: 3072,
  env: { TZ: 'UTC', APP_MODE: 'demo', CUBICLE_GUEST_TOKEN: 'from-the-pool' },
};

describe('buildSandboxPod', () => {
  const pod = buildSandboxPod(template, { namespace: 'sandboxes' });
  const container = pod.spec?.containers[0];

  it('names the Pod after the sandbox and labels it with tenant, pool, sandbox and state', () => {
    expect(pod.metadata?.name).toBe('sbx-01jx0000000000000000000000');
    expect(pod.metadata?.namespace).toBe('sandboxes');
    expect(pod.metadata?.labels).toEqual({
      'cubicle.dev/tenant': template.tenantId,
      'cubicle.dev/pool': template.poolId,
      'cubicle.dev/sandbox': template.sandboxId,
      'cubicle.dev/state': 'warm',
      'app.kubernetes.io/managed-by': 'cubicle',
    });
  });

  it('runs the pool image with requests equal to limits from cpu millis, memory MiB and disk', () => {
    expect(container?.name).toBe('desktop');
    expect(container?.image).toBe(template.image);
    expect(container?.resources).toEqual({
      requests: { cpu: '1500m', memory: '3072Mi', 'ephemeral-storage': '4096Mi' },
      limits: { cpu: '1500m', memory: '3072Mi', 'ephemeral-storage': '4096Mi' },
    });
  });

  it('caps every emptyDir: disk ones share the ephemeral storage, memory ones are small', () => {
    const sized = buildSandboxPod(template, { namespace: 'sandboxes', ephemeralStorageMb: 8192 });
    expect(sized.spec?.containers[0]?.resources?.limits?.['ephemeral-storage']).toBe('8192Mi');
    const limits = Object.fromEntries(
      (sized.spec?.volumes ?? []).map((v) => [v.name, v.emptyDir?.sizeLimit]),
    );
    expect(limits).toEqual({
      dshm: '512Mi',
      tmp: '2048Mi',
      'var-tmp': '1024Mi',
      home: '4096Mi',
      run: '16Mi',
    });
    // Every volume is an emptyDir with a limit, and the disk ones fit inside the Pod's limit.
    for (const volume of pod.spec?.volumes ?? []) {
      expect(volume.emptyDir?.sizeLimit, volume.name).toMatch(/^\d+Mi$/);
    }
    const disk = ['tmp', 'var-tmp', 'home'].map((name) => parseInt(limits[name]!, 10));
    expect(disk.reduce((a, b) => a + b)).toBeLessThan(8192);
  });

  it('takes the token only from the Secret; pool env is plain and cannot override it', () => {
    expect(container?.env).toEqual([
      { name: 'HOME', value: '/home/cubicle' },
      { name: 'APP_MODE', value: 'demo' },
      { name: 'TZ', value: 'UTC' },
      {
        name: 'CUBICLE_GUEST_TOKEN',
        valueFrom: { secretKeyRef: { name: 'sbx-01jx0000000000000000000000-guest', key: 'token' } },
      },
      { name: 'CUBICLE_GUEST_PORT', value: '8080' },
    ]);
    expect(JSON.stringify(pod)).not.toContain('from-the-pool');
  });

  it('exposes guest 8080 and VNC 5900 and probes /healthz on the guest port', () => {
    expect(container?.ports).toEqual([
      { name: 'guest', containerPort: 8080, protocol: 'TCP' },
      { name: 'vnc', containerPort: 5900, protocol: 'TCP' },
    ]);
    expect(container?.readinessProbe?.httpGet).toEqual({ path: '/healthz', port: 'guest' });
  });

  it('does not restart, mounts no API token and drops privileges', () => {
    expect(pod.spec?.restartPolicy).toBe('Never');
    expect(pod.spec?.automountServiceAccountToken).toBe(false);
    expect(container?.securityContext?.allowPrivilegeEscalation).toBe(false);
    expect(container?.securityContext?.capabilities?.drop).toEqual(['ALL']);
  });

  it('runs as a non-root user under RuntimeDefault seccomp with a read-only root', () => {
    expect(pod.spec?.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container?.securityContext).toMatchObject({
      runAsNonRoot: true,
      privileged: false,
      readOnlyRootFilesystem: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.spec?.enableServiceLinks).toBe(false);
    // Every path the desktop writes is an emptyDir; secrets and /dev/shm stay in memory.
    const mounts = Object.fromEntries(
      (container?.volumeMounts ?? []).map((m) => [m.mountPath, m.name]),
    );
    const volumes = Object.fromEntries((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
    for (const path of ['/tmp', '/var/tmp', '/home/cubicle', '/run/cubicle', '/dev/shm'])
      expect(volumes[mounts[path]!]?.emptyDir, path).toBeDefined();
    expect(volumes[mounts['/run/cubicle']!]?.emptyDir?.medium).toBe('Memory');
    expect(container?.env).toContainEqual({ name: 'HOME', value: '/home/cubicle' });
  });

  it('has no placement fields unless asked, and copies them verbatim when asked', () => {
    expect(pod.spec?.runtimeClassName).toBeUndefined();
    expect(pod.spec?.nodeSelector).toBeUndefined();
    expect(pod.spec?.tolerations).toBeUndefined();
    const placed = buildSandboxPod(
      {
        ...template,
        placement: {
          runtimeClassName: 'gvisor',
          nodeSelector: { 'cubicle.dev/desktops': 'true' },
          tolerations: [{ key: 'desktops', operator: 'Exists', effect: 'NoSchedule' }],
        },
      },
      { namespace: 'x', imagePullPolicy: 'IfNotPresent' },
    );
    expect(placed.spec?.runtimeClassName).toBe('gvisor');
    expect(placed.spec?.nodeSelector).toEqual({ 'cubicle.dev/desktops': 'true' });
    expect(placed.spec?.tolerations).toEqual([
      { key: 'desktops', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    expect(placed.spec?.containers[0]?.imagePullPolicy).toBe('IfNotPresent');
  });

  it('refuses ids that are not sandbox ids', () => {
    expect(() =>
      buildSandboxPod({ ...template, sandboxId: 'sbx_../x' }, { namespace: 'x' }),
    ).toThrow('not a sandbox id');
  });
});

describe('podReadiness', () => {
  const base = buildSandboxPod(template, { namespace: 'x' });
  const withStatus = (status: object, metadata: object = {}) => ({
    ...base,
    metadata: { ...base.metadata, ...metadata },
    status,
  });

  it('is ready only when Running, Ready and with an IP', () => {
    expect(podReadiness(withStatus({ phase: 'Pending' })).kind).toBe('waiting');
    expect(
      podReadiness(
        withStatus({
          phase: 'Running',
          podIP: '10.0.0.5',
          conditions: [{ type: 'Ready', status: 'False' }],
        }),
      ).kind,
    ).toBe('waiting');
    expect(
      podReadiness(
        withStatus({
          phase: 'Running',
          podIP: '10.0.0.5',
          conditions: [{ type: 'Ready', status: 'True' }],
        }),
      ),
    ).toEqual({ kind: 'ready', ip: '10.0.0.5' });
  });

  it('fails for gone, terminating, finished Pods and unpullable image names', () => {
    expect(podReadiness(undefined).kind).toBe('failed');
    expect(
      podReadiness(withStatus({ phase: 'Running' }, { deletionTimestamp: '2026-01-01T00:00:00Z' }))
        .kind,
    ).toBe('failed');
    expect(podReadiness(withStatus({ phase: 'Failed', reason: 'Evicted' }))).toEqual({
      kind: 'failed',
      why: 'the Pod ended (Failed: Evicted)',
    });
    expect(
      podReadiness(
        withStatus({
          phase: 'Pending',
          containerStatuses: [
            { name: 'desktop', state: { waiting: { reason: 'InvalidImageName' } } },
          ],
        }),
      ).kind,
    ).toBe('failed');
  });

  it('counts only Pods that are not terminating or finished as live', () => {
    expect(isPodLive(withStatus({ phase: 'Pending' }))).toBe(true);
    expect(isPodLive(withStatus({ phase: 'Succeeded' }))).toBe(false);
    expect(
      isPodLive(withStatus({ phase: 'Running' }, { deletionTimestamp: '2026-01-01T00:00:00Z' })),
    ).toBe(false);
  });
});
