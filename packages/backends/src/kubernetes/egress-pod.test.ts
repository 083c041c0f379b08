import { describe, expect, it } from 'vitest';
import { buildSandboxNetworkPolicy } from '../kube/network-policy.js';
import { egressPointPorts, networkPolicyOptionsOf } from '../kube/network-policy-settings.js';
import { buildCloudConfig } from '../kubevirt/cloud-init.js';
import { egressPointDns, withEgressPoint, withProxyEnv } from './egress-pod.js';
import { buildSandboxPod } from './pod-spec.js';

const template = {
  sandboxId: 'sbx_01jqzk7r7r7r7r7r7r7r7r7r7r',
  tenantId: 'ten_1',
  poolId: 'pool_1',
  image: 'registry.example/desktop:1',
  cpuMillis: 500,
  memoryMb: 1024,
  env: { HTTPS_PROXY: 'http://elsewhere:8080', LANG: 'C.UTF-8' },
};

describe('withEgressPoint', () => {
  const pod = withEgressPoint(buildSandboxPod(template, { namespace: 'sbx' }), {
    address: '10.96.0.53',
    proxyPort: 3128,
  });

  it('makes the point the Pod’s only resolver, with no cluster search domains', () => {
    expect(pod.spec?.dnsPolicy).toBe('None');
    expect(pod.spec?.dnsConfig).toEqual({
      nameservers: ['10.96.0.53'],
      searches: [],
      options: [{ name: 'ndots', value: '1' }],
    });
  });

  it('sets the proxy variables once each, replacing a pool’s own', () => {
    const env = pod.spec!.containers[0]!.env!;
    const of = (name: string) => env.filter((e) => e.name === name).map((e) => e.value);
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy'])
      expect(of(name)).toEqual(['http://10.96.0.53:3128']);
    expect(of('NO_PROXY')).toEqual(['localhost,127.0.0.1,::1']);
    expect(of('LANG')).toEqual(['C.UTF-8']);
  });
});

describe('a VMI pointed at the egress point', () => {
  const point = { address: '10.96.0.53', proxyPort: 3128 };

  it('gets the point as resolver (its launcher Pod’s DNS, passed on by DHCP)', () => {
    expect(egressPointDns(point)).toEqual({
      dnsPolicy: 'None',
      dnsConfig: {
        nameservers: ['10.96.0.53'],
        searches: [],
        options: [{ name: 'ndots', value: '1' }],
      },
    });
  });

  it('gets the proxy variables in its cloud-init env file, replacing the pool’s own', () => {
    const env = withProxyEnv(template.env, point);
    expect(env).toMatchObject({ LANG: 'C.UTF-8', HTTPS_PROXY: 'http://10.96.0.53:3128' });
    const userdata = buildCloudConfig({ token: 't', env });
    expect(userdata).toContain("export https_proxy='http://10.96.0.53:3128'");
    expect(userdata).not.toContain('elsewhere');
  });
});

describe('the sandbox NetworkPolicy with an egress point', () => {
  const options = (egress: 'internet' | 'none') =>
    networkPolicyOptionsOf({
      controlPlaneSelector: 'app.kubernetes.io/name=cubicle,app.kubernetes.io/component=worker',
      egress,
      egressPointSelector: 'app.kubernetes.io/name=cubicle,app.kubernetes.io/component=egress',
      egressPointNamespace: 'cubicle',
      egressPointPorts: { dns: 5353, proxy: 3128 },
    });

  it('lets sandboxes reach only the point’s Pods, on DNS and the proxy port', () => {
    const policy = buildSandboxNetworkPolicy({ ...options('internet'), namespace: 'sbx' });
    expect(policy.spec.egress).toEqual([
      {
        to: [
          {
            podSelector: {
              matchLabels: {
                'app.kubernetes.io/name': 'cubicle',
                'app.kubernetes.io/component': 'egress',
              },
            },
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'cubicle' } },
          },
        ],
        ports: egressPointPorts({ dns: 5353, proxy: 3128 }),
      },
    ]);
    expect(JSON.stringify(policy.spec.egress)).not.toContain('ipBlock');
  });

  it('names DNS at 53 and the point’s own port, UDP and TCP, and the proxy on TCP', () => {
    expect(egressPointPorts({ dns: 5353, proxy: 3128 })).toEqual([
      { protocol: 'UDP', port: 53 },
      { protocol: 'TCP', port: 53 },
      { protocol: 'UDP', port: 5353 },
      { protocol: 'TCP', port: 5353 },
      { protocol: 'TCP', port: 3128 },
    ]);
  });

  it('still allows nothing with egress none', () => {
    expect(buildSandboxNetworkPolicy({ ...options('none'), namespace: 'sbx' }).spec.egress).toEqual(
      [],
    );
  });

  it('refuses a point selector that sandboxes would match', () => {
    expect(() =>
      buildSandboxNetworkPolicy({
        ...options('internet'),
        egressPoint: {
          pods: { matchLabels: { 'app.kubernetes.io/managed-by': 'cubicle' } },
          ports: [],
        },
        namespace: 'sbx',
      }),
    ).toThrow('egress point selector would also select sandboxes');
  });
});
