// The fake internet's host routes capture nothing the machine really uses (its interfaces,
// gateways, resolvers, package registries). While its whole 203.0.113.0/24 was routed into the
// test namespace, this machine's registry proxy (203.0.113.80) answered apt with a fake site's page
// and an image build failed. Only `ip route get` is asked: no packet is sent anywhere.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  FAKE_RANGES,
  inRange,
  machineAddressesIn,
  startFakeInternet,
} from '../support/fake-internet/fake-internet.js';

const routeOf = (address: string) =>
  execFileSync('ip', ['route', 'get', address], { stdio: 'pipe' }).toString();

describe('the fake internet and the machine', () => {
  it('knows which addresses a range holds', () => {
    expect(inRange('203.0.113.53', '203.0.113.0/26')).toBe(true);
    expect(inRange('203.0.113.80', '203.0.113.0/26')).toBe(false);
    expect(inRange('198.51.100.255', '198.51.100.0/24')).toBe(true);
    expect(inRange('198.51.101.0', '198.51.100.0/24')).toBe(false);
  });

  it('finds the addresses the machine uses (its loopback is one)', () => {
    expect(machineAddressesIn(['127.0.0.0/8'])).toContain('127.0.0.1');
    expect(machineAddressesIn(FAKE_RANGES)).toEqual([]);
  });

  it('routes its ranges into the test namespace and every address the machine uses elsewhere', async () => {
    const used = machineAddressesIn(['0.0.0.0/0']).filter(
      (address) =>
        !address.startsWith('127.') && !address.startsWith('0.') && address !== '255.255.255.255',
    );
    const internet = await startFakeInternet();
    try {
      const fakeRoute = routeOf('203.0.113.20');
      const link = /dev (\S+)/.exec(fakeRoute)?.[1];
      expect(link).toMatch(/^cbf/);
      for (const address of used) expect(routeOf(address), address).not.toContain(`dev ${link}`);
    } finally {
      await internet.stop();
    }
  });
});
