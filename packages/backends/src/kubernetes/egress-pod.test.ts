import { readFileSync } from 'node:fs';
import { loadYaml } from '@kubernetes/client-node';
import { EGRESS_CA_PATH } from '@cubicle/driver-guest';
import { describe, expect, it } from 'vitest';
import { guestSecretName } from '../kube/names.js';
import { buildSandboxNetworkPolicy } from '../kube/network-policy.js';
import { egressPointPorts, networkPolicyOptionsOf } from '../kube/network-policy-settings.js';
import { buildCloudConfig } from '../kubevirt/cloud-init.js';
import {
  egressPointDns,
  egressPointLookup,
  egressTrustSecretData,
  withEgressPoint,
  withProxyEnv,
} from './egress-pod.js';
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

describe('withEgressPoint with credentials injected at egress', () => {
  const trust = { caPem: 'CA-PEM', bundle: 'SYSTEM\nCA-PEM\n' };
  const point = { address: '10.96.0.53', proxyPort: 3128, trust };
  const pod = withEgressPoint(buildSandboxPod(template, { namespace: 'sbx' }), point);
  const container = pod.spec!.containers[0]!;

  it('mounts only the trust files of the guest Secret over the system bundle and for Node', () => {
    const volume = pod.spec!.volumes!.find((v) => v.name === 'egress-trust')!;
    expect(volume.secret).toEqual({
      secretName: guestSecretName(template.sandboxId),
      defaultMode: 0o444,
      items: [
        { key: 'egress-ca.pem', path: 'egress-ca.pem' },
        { key: 'ca-certificates.crt', path: 'ca-certificates.crt' },
      ],
    });
    expect(container.volumeMounts?.filter((m) => m.name === 'egress-trust')).toEqual([
      {
        name: 'egress-trust',
        mountPath: '/etc/ssl/certs/ca-certificates.crt',
        subPath: 'ca-certificates.crt',
        readOnly: true,
      },
      {
        name: 'egress-trust',
        mountPath: '/run/cubicle/egress-ca.pem',
        subPath: 'egress-ca.pem',
        readOnly: true,
      },
    ]);
    expect(container.env).toContainEqual({
      name: 'NODE_EXTRA_CA_CERTS',
      value: '/run/cubicle/egress-ca.pem',
    });
  });

  it('puts the trust files in the guest Secret only when the point has a CA', () => {
    expect(egressTrustSecretData(point)).toEqual({
      'egress-ca.pem': 'CA-PEM',
      'ca-certificates.crt': 'SYSTEM\nCA-PEM\n',
    });
    expect(egressTrustSecretData({ address: '10.96.0.53', proxyPort: 3128 })).toEqual({});
    const plain = withEgressPoint(buildSandboxPod(template, { namespace: 'sbx' }), {
      address: '10.96.0.53',
      proxyPort: 3128,
    });
    expect(plain.spec!.volumes!.some((v) => v.name === 'egress-trust')).toBe(false);
  });
});

describe('egressPointLookup', () => {
  it('reads a given address once, with the CA and the bundle that ends with it', async () => {
    let asked = 0;
    const lookup = egressPointLookup({} as never, 'sbx', {
      address: '10.0.0.1',
      proxyPort: 3128,
      trust: () => {
        asked++;
        return Promise.resolve('CA-PEM');
      },
    });
    expect(() => lookup.current()).toThrow(/not read/);
    expect(lookup.read()).toBeNull();
    const provision = lookup.reading((input: { n: number; signal?: AbortSignal }) =>
      Promise.resolve(input.n),
    );
    expect(await provision({ n: 1 })).toBe(1);
    expect(await provision({ n: 2 })).toBe(2);
    expect(asked).toBe(1);
    expect(lookup.current()).toMatchObject({ address: '10.0.0.1', trust: { caPem: 'CA-PEM' } });
    expect(lookup.current().trust!.bundle.trimEnd().endsWith('CA-PEM')).toBe(true);
  });
});

describe('a VMI whose egress point injects credentials', () => {
  it('trusts the CA in its system bundle before the desktop starts, for Node and NSS too', () => {
    const userdata = buildCloudConfig({ token: 't', env: {}, egressCa: 'CA-PEM\n' });
    expect(userdata).toContain('  - path: /usr/local/share/ca-certificates/cubicle-egress-ca.crt');
    expect(userdata).toContain('  - path: /run/cubicle/egress-ca.pem');
    expect(userdata.split('\n').filter((l) => l === '    content: "CA-PEM\\n"')).toHaveLength(2);
    expect(userdata).toContain("export NODE_EXTRA_CA_CERTS='/run/cubicle/egress-ca.pem'");
    const run = userdata.slice(userdata.indexOf('runcmd:'));
    expect(run.indexOf('update-ca-certificates')).toBeGreaterThan(0);
    expect(run.indexOf('update-ca-certificates')).toBeLessThan(run.indexOf('enable'));
    const plain = buildCloudConfig({ token: 't', env: {} });
    expect(plain).not.toContain('update-ca-certificates');
    expect(plain).not.toContain('NODE_EXTRA_CA_CERTS');
  });

  it('its browsers trust the CA too: the launcher adds it to the desktop user’s NSS database', () => {
    // The launcher's start (cubicle-desktop start) adds EGRESS_CA_PATH to $HOME/.pki/nssdb with
    // certutil (driver-guest egress-trust, unit-tested with a real certutil). So cloud-init must
    // write the CA there, readable by that user, and start the launcher as that user (systemd
    // sets HOME for User=) only after writing it; and the disk image needs the same package list
    // as the container image, which has certutil (libnss3-tools) with the browsers.
    const parsed = loadYaml<{
      write_files: { path: string; content: string; permissions: string }[];
      runcmd: string[][];
    }>(buildCloudConfig({ token: 't', env: {}, egressCa: 'CA-PEM\n' }));
    const ca = parsed.write_files.find((f) => f.path === EGRESS_CA_PATH);
    expect(ca).toMatchObject({ content: 'CA-PEM\n', permissions: '0644' });
    const unit = parsed.write_files.find((f) => f.path.endsWith('cubicle-desktop.service'));
    expect(unit?.content).toMatch(/^User=cubicle$/m);
    expect(unit?.content).toContain('exec cubicle-desktop start');
    // write_files runs in cloud-init's first stage, runcmd in its last: the CA is there first.
    expect(parsed.runcmd.at(-1)).toEqual([
      'systemctl',
      'enable',
      '--now',
      'cubicle-desktop.service',
    ]);
    const packages = JSON.parse(
      readFileSync(new URL('../../../driver-guest/desktop-packages.json', import.meta.url), 'utf8'),
    ) as { apps: string[] };
    expect(packages.apps).toContain('libnss3-tools');
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
