import { describe, expect, it } from 'vitest';
import { AddressRefusal, classifyAddress, resolveDeliverable } from './address-guard.js';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['100.64.0.1', 'shared'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link_local'],
    ['64:ff9b::a00:1', 'reserved'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])(
    '%s is public',
    (address) => {
      expect(classifyAddress(address)).toBeNull();
    },
  );

  it('rejects what is not an address', () => {
    expect(() => classifyAddress('example.com')).toThrow(/not an IP address/);
  });
});

describe('resolveDeliverable', () => {
  it('refuses a name that resolves to loopback, and allows it when private addresses are allowed', async () => {
    const refusal = await resolveDeliverable('localhost', false).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(AddressRefusal);
    expect((refusal as AddressRefusal).kind).toBe('loopback');
    const allowed = await resolveDeliverable('localhost', true);
    expect(['127.0.0.1', '::1']).toContain(allowed.address);
  });

  it('checks literals without resolving them', async () => {
    await expect(resolveDeliverable('169.254.169.254', false)).rejects.toMatchObject({
      kind: 'link_local',
    });
    await expect(resolveDeliverable('8.8.8.8', false)).resolves.toEqual({
      address: '8.8.8.8',
      family: 4,
    });
  });

  it('refuses a name that does not resolve', async () => {
    await expect(resolveDeliverable('no-such-host.invalid', false)).rejects.toMatchObject({
      kind: 'unresolvable',
    });
  });
});
