import { describe, expect, it } from 'vitest';
import { limitFiles, parseOomKills, parseProcCgroup } from './sandbox-cgroup.js';

const limits = { cpuMillis: 500, memoryMb: 512, pids: 4096 };

describe('sandbox cgroups', () => {
  it('reads both hierarchies of /proc/<pid>/cgroup, co-mounted controllers included', () => {
    const map = parseProcCgroup('4:memory:/process_api/x\n2:cpu,cpuacct:/\n0::/user.slice\n');
    expect(map.get('memory')).toBe('/process_api/x');
    expect(map.get('cpu')).toBe('/');
    expect(map.get('cpuacct')).toBe('/');
    expect(map.get('')).toBe('/user.slice');
  });

  it("turns a pool's cpu into a CFS quota and its memory into a limit without swap", () => {
    expect(limitFiles(1, 'cpu', limits)).toEqual([
      ['cpu.cfs_period_us', '100000'],
      ['cpu.cfs_quota_us', '50000'],
    ]);
    expect(limitFiles(1, 'memory', limits)).toEqual([
      ['memory.limit_in_bytes', String(512 * 1024 * 1024)],
      ['memory.memsw.limit_in_bytes', String(512 * 1024 * 1024)],
    ]);
    expect(limitFiles(1, 'pids', limits)).toEqual([['pids.max', '4096']]);
    expect(limitFiles(1, 'cpuacct', limits)).toEqual([]);
    expect(Object.fromEntries(limitFiles(2, '', { ...limits, cpuMillis: 2000 }))).toEqual({
      'cpu.max': '200000 100000',
      'memory.max': String(512 * 1024 * 1024),
      'memory.swap.max': '0',
      'pids.max': '4096',
    });
  });

  it('counts OOM kills from v1 oom_control and v2 memory.events', () => {
    expect(parseOomKills('oom_kill_disable 0\nunder_oom 0\noom_kill 3\n')).toBe(3);
    expect(parseOomKills('low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n')).toBe(2);
    expect(parseOomKills('oom_kill_disable 0\nunder_oom 0\n')).toBe(0);
  });
});
