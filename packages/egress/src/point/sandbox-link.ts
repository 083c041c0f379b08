import { execFile } from 'node:child_process';
import { mkdir, readdir, readlink, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  linkCount,
  parseIpv4,
  parseNetnsName,
  planLink,
  type LinkPlan,
  type LinkRange,
} from './link-plan.js';
import { nftRuleset } from './nft-ruleset.js';

const run = promisify(execFile);
const SYSTEM_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';
/** Where `ip netns` keeps its namespaces (one bind-mounted file each). */
export const NETNS_DIR = '/run/netns';
/** Index claims (symlink `<index>` → desktop id), like the sandbox uids' (sandbox-uid.ts). */
const CLAIMS_DIR = '/run/cubicle-egress/links';

async function tool(command: string, args: string[], input?: string): Promise<string> {
  const child = run(command, args, { env: { PATH: SYSTEM_PATH }, maxBuffer: 4 << 20 });
  if (input !== undefined) child.child.stdin?.end(input);
  try {
    return (await child).stdout;
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(
      `${command} ${args.slice(0, 4).join(' ')}: ${stderr || (err as Error).message}`,
    );
  }
}

/** applyRuleset installs (or replaces, atomically) the host's cubicle_egress nftables table. */
export async function applyRuleset(): Promise<void> {
  await tool('nft', ['-f', '-'], nftRuleset());
}

/**
 * checkRangeFree refuses a link range that overlaps a route this machine already has outside
 * Cubicle's own links (a LAN, a VPN): sandboxes would shadow it, or it them.
 */
export async function checkRangeFree(range: LinkRange): Promise<void> {
  const size = 2 ** (32 - range.prefix);
  const routes = JSON.parse(await tool('ip', ['-j', '-4', 'route', 'show', 'table', 'all'])) as {
    dst: string;
    dev?: string;
  }[];
  for (const route of routes) {
    if (route.dev?.startsWith('cbe') || route.dst === 'default') continue;
    const [address, length] = route.dst.split('/');
    const start = parseIpv4(address ?? '');
    if (start === null) continue;
    const end = start + 2 ** (32 - Number(length ?? 32)) - 1;
    if (start < range.base + size && end >= range.base)
      throw new Error(
        `the egress link range overlaps the route ${route.dst} (${route.dev ?? '?'}): ` +
          'set CUBICLE_EGRESS_LINK_RANGE to a free /16',
      );
  }
}

/** claimIndex reserves a link index for `desktopId` (atomic across processes). */
async function claimIndex(range: LinkRange, desktopId: string): Promise<number> {
  await mkdir(CLAIMS_DIR, { recursive: true, mode: 0o700 });
  for (let index = 0; index < linkCount(range); index += 1) {
    const claim = join(CLAIMS_DIR, String(index));
    try {
      await symlink(desktopId, claim);
      return index;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if ((await readlink(claim).catch(() => null)) === desktopId) return index;
    }
  }
  throw new Error('no free egress link: every /30 of the link range is taken');
}

async function releaseIndex(index: number, desktopId: string): Promise<void> {
  const claim = join(CLAIMS_DIR, String(index));
  if ((await readlink(claim).catch(() => null)) === desktopId)
    await unlink(claim).catch(() => undefined);
}

/**
 * createSandboxLink makes desktop `desktopId`'s network namespace and its veth link to the host:
 * the sandbox end `eth0` with the link's sandbox address and a default route via the host end,
 * which is its only way anywhere (the host end is filtered by nft-ruleset.ts). No IPv6 address
 * is made on either end (addrgenmode none): IPv6 is off in sandboxes. The namespace belongs to
 * the host's user namespace, so nothing in the sandbox (its own user namespace, no host
 * capabilities) can change its addresses, routes or filters.
 */
export async function createSandboxLink(range: LinkRange, desktopId: string): Promise<LinkPlan> {
  const plan = planLink(range, await claimIndex(range, desktopId), desktopId);
  await removeLink(plan); // whatever a crash left under these names
  try {
    await tool('ip', ['netns', 'add', plan.netns]);
    await tool(
      'ip',
      ['-batch', '-'],
      [
        `link add ${plan.hostIf} type veth peer name ${plan.sandboxIf} netns ${plan.netns}`,
        `link set ${plan.hostIf} addrgenmode none`,
        `addr add ${plan.hostAddress}/${plan.prefixLength} dev ${plan.hostIf}`,
        `link set ${plan.hostIf} up`,
      ].join('\n'),
    );
    await tool(
      'ip',
      ['-n', plan.netns, '-batch', '-'],
      [
        `link set lo up`,
        `link set ${plan.sandboxIf} addrgenmode none`,
        `addr add ${plan.sandboxAddress}/${plan.prefixLength} dev ${plan.sandboxIf}`,
        `link set ${plan.sandboxIf} up`,
        `route add default via ${plan.hostAddress} dev ${plan.sandboxIf}`,
      ].join('\n'),
    );
  } catch (err) {
    await destroySandboxLink(plan);
    throw err;
  }
  return plan;
}

async function removeLink(plan: LinkPlan): Promise<void> {
  // Deleting the namespace deletes its eth0, and with it the host end of the pair.
  await tool('ip', ['netns', 'delete', plan.netns]).catch(() => undefined);
  await tool('ip', ['link', 'delete', plan.hostIf]).catch(() => undefined);
}

/** destroySandboxLink removes a link and frees its index (idempotent). */
export async function destroySandboxLink(plan: LinkPlan): Promise<void> {
  await removeLink(plan);
  const parsed = parseNetnsName(plan.netns);
  if (parsed) await releaseIndex(plan.index, parsed.desktopId);
}

/** listSandboxLinks reads Cubicle's namespaces back (by name only) as plans. */
export async function listSandboxLinks(range: LinkRange): Promise<LinkPlan[]> {
  const names = await readdir(NETNS_DIR).catch(() => [] as string[]);
  const plans: LinkPlan[] = [];
  for (const name of names) {
    const parsed = parseNetnsName(name);
    if (!parsed || parsed.index >= linkCount(range)) continue;
    plans.push(planLink(range, parsed.index, parsed.desktopId));
  }
  return plans;
}

/**
 * sweepSandboxLinks removes the links of desktops starting with `prefix` (one installation's)
 * that `isLive` says are gone: what a crash left. Only names Cubicle made are ever considered.
 */
export async function sweepSandboxLinks(
  range: LinkRange,
  prefix: string,
  isLive: (desktopId: string) => boolean,
): Promise<string[]> {
  const removed: string[] = [];
  for (const plan of await listSandboxLinks(range)) {
    const desktopId = parseNetnsName(plan.netns)!.desktopId;
    if (!desktopId.startsWith(prefix) || isLive(desktopId)) continue;
    await destroySandboxLink(plan);
    removed.push(desktopId);
  }
  return removed;
}
