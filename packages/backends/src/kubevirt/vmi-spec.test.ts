import { spawnSync } from 'node:child_process';
import { loadYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { buildCloudConfig, shellQuote } from './cloud-init.js';
import { buildSandboxVmi, isVmiLive, vmiReadiness } from './vmi-spec.js';

const template = {
  sandboxId: 'sbx_01jx0000000000000000000000',
  tenantId: 'ten_a',
  poolId: 'pool_b',
  image: 'registry.example/cubicle/desktop-disk:1',
  cpuMillis: 1500,
  memoryMb: 2048,
  env: { TZ: 'UTC' },
};

describe('buildSandboxVmi', () => {
  const vmi = buildSandboxVmi(template, { namespace: 'vms' });
  const spec = vmi.spec as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  it('is a kubevirt.io/v1 VMI named and labelled like the sandbox', () => {
    expect(vmi.apiVersion).toBe('kubevirt.io/v1');
    expect(vmi.kind).toBe('VirtualMachineInstance');
    expect(vmi.metadata?.name).toBe('sbx-01jx0000000000000000000000');
    expect(vmi.metadata?.labels?.['cubicle.dev/state']).toBe('warm');
    expect(vmi.metadata?.labels?.['cubicle.dev/pool']).toBe('pool_b');
  });

  it('boots the pool image as a containerDisk with cloud-init from the sandbox Secret', () => {
    expect(spec.volumes).toEqual([
      { name: 'containerdisk', containerDisk: { image: template.image } },
      {
        name: 'cloudinitdisk',
        cloudInitNoCloud: { secretRef: { name: 'sbx-01jx0000000000000000000000-guest' } },
      },
    ]);
    expect(JSON.stringify(vmi)).not.toContain('userData');
  });

  it('uses the pod network behind masquerade with guest and VNC ports, a graphics device and a tablet', () => {
    expect(spec.networks).toEqual([{ name: 'default', pod: {} }]);
    expect(spec.domain.devices.interfaces).toEqual([
      {
        name: 'default',
        masquerade: {},
        ports: [
          { name: 'guest', port: 8080, protocol: 'TCP' },
          { name: 'vnc', port: 5900, protocol: 'TCP' },
        ],
      },
    ]);
    expect(spec.domain.devices.autoattachGraphicsDevice).toBe(true);
    expect(spec.domain.devices.inputs).toEqual([{ name: 'tablet', type: 'tablet', bus: 'usb' }]);
  });

  it('sizes the VM from the pool: whole cores for the guest, exact requests for the pod', () => {
    expect(spec.domain.cpu).toEqual({ cores: 2 });
    expect(spec.domain.memory).toEqual({ guest: '2048Mi' });
    expect(spec.domain.resources.requests).toEqual({ cpu: '1500m', memory: '2048Mi' });
  });
});

describe('vmiReadiness', () => {
  it('is ready when Running with an interface address', () => {
    expect(vmiReadiness({ status: { phase: 'Scheduled' } }).kind).toBe('waiting');
    expect(
      vmiReadiness({ status: { phase: 'Running', interfaces: [{ name: 'default' }] } }).kind,
    ).toBe('waiting');
    expect(
      vmiReadiness({
        status: { phase: 'Running', interfaces: [{ name: 'default', ipAddress: '10.1.2.3' }] },
      }),
    ).toEqual({ kind: 'ready', ip: '10.1.2.3' });
  });
  it('fails when gone, deleted or finished', () => {
    expect(vmiReadiness(undefined).kind).toBe('failed');
    expect(vmiReadiness({ status: { phase: 'Failed' } }).kind).toBe('failed');
    expect(
      vmiReadiness({ metadata: { deletionTimestamp: new Date() }, status: { phase: 'Running' } })
        .kind,
    ).toBe('failed');
    expect(isVmiLive({ status: { phase: 'Succeeded' } })).toBe(false);
    expect(isVmiLive({ status: { phase: 'Running' } })).toBe(true);
  });
});

describe('buildCloudConfig', () => {
  const token = 'a1'.repeat(32);
  const env = { TZ: 'UTC', TRICKY: `it's "quoted" $HOME \`x\`\nline2`, CUBICLE_GUEST_PORT: '1' };
  const doc = buildCloudConfig({ token, env });
  const parsed = loadYaml<{
    write_files: { path: string; content: string; permissions: string }[];
    runcmd: string[][];
  }>(doc);

  it('is a cloud-config that writes a private env file and a unit running the launcher', () => {
    expect(doc.startsWith('#cloud-config\n')).toBe(true);
    const envFile = parsed.write_files.find((f) => f.path === '/etc/cubicle/guest.env');
    expect(envFile?.permissions).toBe('0600');
    const unit = parsed.write_files.find((f) => f.path.endsWith('cubicle-desktop.service'));
    expect(unit?.content).toContain('exec cubicle-desktop start --daemon child');
    expect(parsed.runcmd).toContainEqual([
      'systemctl',
      'enable',
      '--now',
      'cubicle-desktop.service',
    ]);
  });

  it('the env file yields exactly the token, the port and the pool env in a real shell', () => {
    const envFile =
      parsed.write_files.find((f) => f.path === '/etc/cubicle/guest.env')?.content ?? '';
    const out = spawnSync(
      'sh',
      [
        '-c',
        `${envFile}\nprintf '%s\\0' "$CUBICLE_GUEST_TOKEN" "$CUBICLE_GUEST_PORT" "$TRICKY" "$TZ"`,
      ],
      { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } },
    );
    expect(out.status).toBe(0);
    expect(out.stdout.split('\0').slice(0, 4)).toEqual([token, '8080', env.TRICKY, 'UTC']);
  });

  it('shellQuote survives single quotes', () => {
    const out = spawnSync('sh', ['-c', `printf %s ${shellQuote("a'b'c")}`], { encoding: 'utf8' });
    expect(out.stdout).toBe("a'b'c");
  });
});
