import { parseEnv } from '@cubicle/config';
import { describe, expect, it } from 'vitest';
import { WorkerEnv } from './env.js';

const base = {
  DATABASE_URL: 'postgresql://h/db',
  REDIS_URL: 'unix:///tmp/r.sock',
  CUBICLE_KEYRING: 'k1:AAAA',
};

describe('worker env', () => {
  it('parses defaults and the backend list', () => {
    const env = parseEnv(WorkerEnv, { ...base, CUBICLE_BACKENDS: 'local, kubernetes' });
    expect(env).toMatchObject({
      QUEUE_PREFIX: 'cubicle',
      WORKER_CONCURRENCY: 8,
      CUBICLE_BACKENDS: ['local', 'kubernetes'],
      RECLAIM_INTERVAL_MS: 500,
    });
  });

  it('names bad variables', () => {
    expect(() => parseEnv(WorkerEnv, { ...base, QUEUE_PREFIX: 'A B' })).toThrow(/QUEUE_PREFIX/);
    expect(() => parseEnv(WorkerEnv, { ...base, CUBICLE_BACKENDS: 'docker' })).toThrow(
      /CUBICLE_BACKENDS/,
    );
    expect(() =>
      parseEnv(WorkerEnv, { DATABASE_URL: base.DATABASE_URL, REDIS_URL: base.REDIS_URL }),
    ).toThrow(/CUBICLE_KEYRING/);
  });

  it('reads the API group for sandbox sockets and a Redis URL with a password on a socket', () => {
    const env = parseEnv(WorkerEnv, {
      ...base,
      REDIS_URL: 'unix://:0a1b@localhost/tmp/r.sock',
      CUBICLE_SANDBOX_SOCKET_GID: '998',
    });
    expect(env.CUBICLE_SANDBOX_SOCKET_GID).toBe(998);
    expect(parseEnv(WorkerEnv, base).CUBICLE_SANDBOX_SOCKET_GID).toBeUndefined();
    expect(() => parseEnv(WorkerEnv, { ...base, CUBICLE_SANDBOX_SOCKET_GID: 'cubicle' })).toThrow(
      /CUBICLE_SANDBOX_SOCKET_GID/,
    );
  });

  it('reads the Kubernetes settings', () => {
    const env = parseEnv(WorkerEnv, {
      ...base,
      CUBICLE_BACKENDS: 'kubernetes,kubevirt',
      KUBE_NAMESPACE: 'desktops',
      KUBE_TOLERATIONS: '[{"key":"desktops","operator":"Exists","effect":"NoSchedule"}]',
    });
    expect(env.KUBE_NAMESPACE).toBe('desktops');
    expect(env.KUBE_TOLERATIONS).toEqual([
      { key: 'desktops', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    expect(parseEnv(WorkerEnv, base)).toMatchObject({
      KUBE_NAMESPACE: 'cubicle-sandboxes',
      KUBE_NETWORK_POLICY: true,
      KUBE_CONTROL_PLANE_SELECTOR:
        'app.kubernetes.io/name=cubicle,app.kubernetes.io/component in (api,worker)',
      KUBE_SANDBOX_EGRESS: 'internet',
      KUBE_SANDBOX_EPHEMERAL_STORAGE_MB: 4096,
    });
    expect(
      parseEnv(WorkerEnv, {
        ...base,
        KUBE_SANDBOX_EGRESS: 'none',
        KUBE_DENIED_EGRESS_CIDRS: '203.0.113.0/24,2001:db8::/32',
      }),
    ).toMatchObject({
      KUBE_SANDBOX_EGRESS: 'none',
      KUBE_DENIED_EGRESS_CIDRS: '203.0.113.0/24,2001:db8::/32',
    });
    expect(() => parseEnv(WorkerEnv, { ...base, KUBE_DENIED_EGRESS_CIDRS: '10.0.0.1' })).toThrow(
      /KUBE_DENIED_EGRESS_CIDRS/,
    );
    expect(() => parseEnv(WorkerEnv, { ...base, KUBE_SANDBOX_EGRESS: 'all' })).toThrow(
      /KUBE_SANDBOX_EGRESS/,
    );
    expect(() => parseEnv(WorkerEnv, { ...base, KUBE_NAMESPACE: 'Not_A_Namespace' })).toThrow(
      /KUBE_NAMESPACE/,
    );
    expect(() => parseEnv(WorkerEnv, { ...base, KUBE_TOLERATIONS: '{"key":1}' })).toThrow(
      /KUBE_TOLERATIONS/,
    );
  });
});
