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
    ['192.88.99.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  // IPv4 inside IPv6: refused whole, whatever the IPv4 (a translator or relay delivers into IPv4
  // space the guard cannot see); the kind names the IPv4's class when it sits at a known place.
  it.each([
    // IPv4-mapped, both spellings, and the public address that was allowed before.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:8.8.8.8', 'ipv4_embedded'],
    // IPv4-compatible (deprecated).
    ['::10.0.0.1', 'private'],
    ['::a9fe:a9fe', 'link_local'],
    ['::8.8.8.8', 'ipv4_embedded'],
    // SIIT IPv4-translated ::ffff:0:0:0/96.
    ['::ffff:0:a9fe:a9fe', 'link_local'],
    ['::ffff:0:8.8.8.8', 'ipv4_embedded'],
    // Well-known NAT64 64:ff9b::/96.
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::169.254.169.254', 'link_local'],
    ['64:ff9b::808:808', 'ipv4_embedded'],
    // Local-use NAT64 64:ff9b:1::/48 (where the IPv4 sits is the operator's choice).
    ['64:ff9b:1::a00:1', 'ipv4_embedded'],
    ['64:ff9b:1:a00:1::', 'ipv4_embedded'],
    ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'ipv4_embedded'],
    // 6to4 2002::/16 carries its IPv4 in the second and third groups.
    ['2002:a9fe:a9fe::1', 'link_local'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:0a00:0001:1::1', 'private'],
    ['2002:808:808::1', 'ipv4_embedded'],
    // Teredo 2001::/32 (client IPv4 obfuscated, server IPv4 in clear).
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'ipv4_embedded'],
    ['2001::a9fe:a9fe', 'ipv4_embedded'],
    ['2001:0:ffff:ffff:ffff:ffff:ffff:ffff', 'ipv4_embedded'],
  ])('%s (IPv4 inside IPv6) is refused as %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '172.32.0.1',
    '2606:4700::1111',
    // Just outside the embedding prefixes.
    '2001:1::1',
    '2003::1',
    '64:ff9b:2::1',
    '64:ff9b::1:0:0:1',
  ])('%s is public', (address) => {
    expect(classifyAddress(address)).toBeNull();
  });

  it('ignores a zone index', () => {
    expect(classifyAddress('fe80::1%eth0')).toBe('link_local');
  });

  it('rejects what is not an address', () => {
    expect(() => classifyAddress('example.com')).toThrow(/not an IP address/);
  });
});

describe('resolveDeliverable', () => {
  it('refuses a name that resolves to loopback without telling the address, and allows it when private addresses are allowed', async () => {
    const refusal = await resolveDeliverable('localhost', false).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(AddressRefusal);
    expect((refusal as AddressRefusal).kind).toBe('loopback');
    expect((refusal as AddressRefusal).message).toBe(
      'localhost resolves to an address webhooks may not reach (loopback)',
    );
    expect(JSON.stringify({ ...(refusal as object) })).not.toMatch(/127\.0\.0\.1|::1/);
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
