#!/usr/bin/env node
// npm run bench:runs -- --json [--iterations N] [--runs 16] [--lines 20000]
// Runs over a warm claim, through the real API listener, worker and guest:
//   start_p50_ms          POST …/runs → the program's first instruction in the guest (it prints
//                         its own clock: the guest runs on this machine, so clocks agree)
//   first_byte_p50_ms     POST …/runs → its first stdout event at an SSE client
//   event_latency_p50_ms  a line printed in the guest (its clock) → received by an SSE client
//   events_per_s          stdout RunEvents delivered to SSE clients per second with N concurrent
//                         runs writing one line per write (paced), each run checked complete
//                         (every line, dense seq, final status); bulk_* is the same with
//                         unpaced output, which the pipe coalesces into large events
//   cpu_ms_per_1k_events  CPU time each part of this stack (guest daemon, worker, API, Postgres,
//                         Redis, this client) spent over the paced phases per 1,000 events: what
//                         each hop costs per event, far less sensitive to other load on the
//                         machine than events_per_s (machine_busy_percent beside it)
//   floor_events_per_s   the paced programs through two bare hops (lib/event-floor.mjs), the
//                         reader and programs in a cgroup like the desktop's (floor_cgroup;
//                         host_floor_events_per_s without it): what any event path from a
//                         desktop could sustain on this machine, for reading the above;
//                         measured after each paced phase (--rounds N, default 5), the goal
//                         is the median of the rounds' ratios
// --paced-only skips the start, latency and bulk phases (a quick look at the event path).
// Prints one JSON line.
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { cpuSnapshot, cpuSpent, preciseCpuMs, treePids } from './lib/process-cpu.mjs';
import { eventFloor } from './lib/event-floor.mjs';
import { log, percentile, round, startStack, waitQuiet } from './lib/stack.mjs';

const args = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const iterations = arg('--iterations', 40);
const concurrentRuns = arg('--runs', 16);
const linesPerRun = arg('--lines', 20_000);
const pacedLines = arg('--paced-lines', 3000);
const pacedSleep = arg('--paced-sleep', 0.0005);
const isPacedOnly = args.includes('--paced-only');
const pacedRounds = arg('--rounds', 5);
// The desktop's CPU limit (its pool's `cpu`): the machine's cores by default, as the floor's
// programs have; with the pool default (1) the runs' programs and the guest daemon share one
// core's quota, which the floor does not (see throttled_ms).
const poolCpu = arg('--cpu', availableParallelism());

/** cpuMs reads a process's user + system CPU time (ms) from /proc. */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100)
};
/** machineCpu reads idle and total CPU time of the whole machine from /proc/stat. */
const machineCpu = () => {
  const n = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { idle: n[3] + (n[4] ?? 0), total: n.reduce((a, b) => a + b, 0) };
};

/** commitCount reads how many transactions the database has committed (all sessions). */
const commitCount = async (db) => {
  const [row] = await db.$queryRawUnsafe(
    'SELECT xact_commit::int AS n FROM pg_stat_database WHERE datname = current_database()',
  );
  return row.n;
};

const nowMs = () => performance.timeOrigin + performance.now();
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function post(base, path, headers, body) {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(path, base),
      { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json' } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          if (res.statusCode !== 202)
            return reject(new Error(`POST ${path}: ${res.statusCode} ${text}`));
          resolve(JSON.parse(text));
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** follow reads a run's SSE stream to its end, calling onEvent(event, receivedAtMs). */
function follow(base, runId, headers, onEvent) {
  return new Promise((resolve, reject) => {
    const req = http.get(
      new URL(`/v1/runs/${runId}/events/stream`, base),
      { agent, headers },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk) => {
          const at = nowMs();
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (frame.startsWith(':')) continue;
            if (frame.startsWith('event: end')) {
              req.destroy();
              return resolve();
            }
            const data = frame.slice(frame.indexOf('\ndata: ') + 7);
            onEvent(JSON.parse(data), at);
          }
        });
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
  });
}

const stack = await startStack();
try {
  log('warming one desktop…');
  await stack.warmPool(
    'runs',
    { image: 'local', cpu: poolCpu, autoscaling: { min: 0, initial: 1, max: 1 } },
    1,
  );
  const claim = (await stack.call('POST', '/v1/pools/runs/claims', { ttl_seconds: 3600 })).body;
  const headers = { authorization: stack.authorization };
  const create = (body) => post(stack.url, `/v1/claims/${claim.id}/runs`, headers, body);
  await waitQuiet({ settleMs: 10_000 });

  log(`start and first byte × ${iterations}…`);
  const starts = [];
  const firstBytes = [];
  for (let i = -3; i < (isPacedOnly ? -3 : iterations); i++) {
    const t0 = nowMs();
    const run = await create({ argv: ['/bin/date', '+%s%N'] });
    let first = null;
    let printed = null;
    await follow(stack.url, run.id, headers, (event, at) => {
      if (event.type === 'stdout' && first === null) {
        first = at;
        printed = Number(BigInt(event.data.text.trim()) / 1000n) / 1000;
      }
    });
    if (i < 0) continue;
    starts.push(printed - t0);
    firstBytes.push(first - t0);
  }

  log('line latency…');
  const latencies = [];
  for (let i = 0; i < (isPacedOnly ? 0 : 4); i++) {
    const run = await create({
      argv: ['/bin/sh', '-c', 'for i in $(seq 1 50); do /bin/date +%s%N; sleep 0.02; done'],
    });
    await follow(stack.url, run.id, headers, (event, at) => {
      if (event.type !== 'stdout') return;
      // A chunk may hold more than one line; each line's latency counts.
      for (const line of event.data.text.split('\n').filter(Boolean))
        latencies.push(at - Number(BigInt(line) / 1000n) / 1000);
    });
  }

  log(`throughput: ${concurrentRuns} runs × ${linesPerRun} lines…`);
  const program = `BEGIN { for (i = 0; i < ${linesPerRun}; i++) { printf "%d\\n", i; fflush() } }`;
  const runs = await Promise.all(
    Array.from({ length: isPacedOnly ? 0 : concurrentRuns }, () =>
      create({ argv: ['/usr/bin/awk', program] }),
    ),
  );
  const t0 = nowMs();
  let events = 0;
  let lost = 0;
  await Promise.all(
    runs.map(async (run) => {
      let text = '';
      let next = 1;
      let last = null;
      await follow(stack.url, run.id, headers, (event) => {
        events += 1;
        if (event.seq !== next) lost += 1;
        next = event.seq + 1;
        last = event;
        if (event.type === 'stdout') text += event.data.text;
      });
      const lines = text.split('\n').filter(Boolean);
      const complete =
        lines.length === linesPerRun &&
        lines.every((l, i) => l === String(i)) &&
        last?.data.status === 'succeeded';
      if (!complete) lost += 1;
    }),
  );
  const seconds = (nowMs() - t0) / 1000;

  // Paced: each line its own write, a little apart, so the guest reads most lines as chunks of
  // their own and every line becomes a RunEvent: what the event path (guest → worker →
  // Postgres → Redis → API → SSE) sustains in events, not bytes. Rounds alternate the path and
  // its floor (the same programs through two bare hops), so each ratio compares two phases a few
  // seconds apart on a machine whose other load comes and goes.
  // Every program of a phase waits for one line on stdin before it writes: the bench sends it to
  // all of them once every run is running, so the rate is the event path's, not how far apart
  // 16 runs start on a loaded machine (start_p50_ms is that figure; start_spread_ms shows it).
  // The floor's programs get no stdin (EOF at once): they are spawned together anyway.
  const paced = `import sys, time
sys.stdin.readline()
w = sys.stdout.write
for i in range(${pacedLines}):
    w('%d\\n' % i); sys.stdout.flush(); time.sleep(${pacedSleep})`;
  const apiPid = stack.apis[0].pid;
  // This stack's processes, each read precisely (lib/process-cpu.mjs taskCpuMs): the guest
  // daemon of the claimed desktop (the worker's descendant), the worker, the API, Postgres
  // (postmaster and backends) and Redis; the run's programs are the guest's reaped children.
  const guestPids = treePids(stack.workerPid, (name) => name === 'node:driver-guest');
  const stages = {
    guest: guestPids,
    worker: [String(stack.workerPid)],
    api: [String(apiPid)],
    postgres: treePids(stack.postgresPid),
    redis: treePids(process.pid, (name) => name === 'redis-server'),
    bench_client: [String(process.pid)],
  };
  const throttledMs = cgroupThrottledMs(guestPids[0]);
  const sandboxed = floorCgroup(guestPids[0]);
  let throttled = throttledMs() === null ? null : 0;
  const stageCpu = () =>
    Object.fromEntries(Object.entries(stages).map(([k, pids]) => [k, preciseCpuMs(pids)]));
  const rounds = [];
  let pacedEvents = 0;
  let cpu0;
  let cpu1;
  let processCpu;
  let commits = 0;
  const stageSum = Object.fromEntries(Object.keys(stages).map((k) => [k, 0]));
  // Round 0 warms the path (code compiled, statements prepared) and is not counted.
  for (let round_ = -1; round_ < pacedRounds; round_++) {
    log(
      `paced ${round_ + 1}/${pacedRounds}: ${concurrentRuns} runs × ${pacedLines} lines, one write each…`,
    );
    const pacedRuns = await Promise.all(
      Array.from({ length: concurrentRuns }, () =>
        create({ argv: ['/usr/bin/python3', '-c', paced] }),
      ),
    );
    // The go line, sent to every run once all of them are running.
    const runningAt = [];
    let go;
    const allRunning = new Promise((resolve) => (go = resolve));
    // A run that never says `running` (it failed to start, and is counted lost) holds no one up.
    const giveUp = setTimeout(() => go(), 60_000);
    const gate = allRunning.then(() =>
      Promise.all(
        pacedRuns.map((run) =>
          post(stack.url, `/v1/runs/${run.id}/stdin`, headers, { data: 'go\n', eof: true }),
        ),
      ),
    );
    const p0 = nowMs();
    cpu0 = { worker: cpuMs(stack.workerPid), api: cpuMs(apiPid), machine: machineCpu() };
    const processes0 = cpuSnapshot();
    const stages0 = stageCpu();
    const throttled0 = throttledMs();
    const commits0 = await commitCount(stack.db);
    let events = 0;
    let first = null;
    let last = 0;
    await Promise.all(
      pacedRuns.map(async (run) => {
        let text = '';
        let next = 1;
        let final = null;
        await follow(stack.url, run.id, headers, (event, receivedAt) => {
          if (event.seq !== next) lost += 1;
          next = event.seq + 1;
          final = event;
          if (event.type === 'status' && event.data.status === 'running') {
            runningAt.push(receivedAt);
            if (runningAt.length === concurrentRuns) go();
          }
          if (event.type !== 'stdout') return;
          events += 1;
          first ??= receivedAt;
          last = Math.max(last, receivedAt);
          text += event.data.text;
        });
        const lines = text.split('\n').filter(Boolean);
        if (
          lines.length !== pacedLines ||
          !lines.every((l, i) => l === String(i)) ||
          final?.data.status !== 'succeeded'
        )
          lost += 1;
      }),
    );
    clearTimeout(giveUp);
    await gate.catch(() => (lost += 1));
    const seconds = (last - (first ?? p0)) / 1000;
    if (round_ < 0) continue;
    cpu1 = { worker: cpuMs(stack.workerPid), api: cpuMs(apiPid), machine: machineCpu() };
    const stages1 = stageCpu();
    if (throttled !== null) throttled += (throttledMs() ?? throttled0) - throttled0;
    for (const k of Object.keys(stages)) stageSum[k] += stages1[k] - stages0[k];
    processCpu = cpuSpent(processes0, cpuSnapshot());
    commits += (await commitCount(stack.db)) - commits0;
    pacedEvents += events;
    const busy = Math.round(
      100 *
        (1 -
          (cpu1.machine.idle - cpu0.machine.idle) /
            Math.max(1, cpu1.machine.total - cpu0.machine.total)),
    );
    // The same programs through two bare hops (lib/event-floor.mjs), on this machine, now.
    log(`floor ${round_ + 1}/${pacedRounds}: the paced programs through a bare two-hop forwarder…`);
    const floor = await eventFloor({
      argv: ['/usr/bin/python3', '-c', paced],
      runs: concurrentRuns,
      linesPerRun: pacedLines,
      cgroupProcs: sandboxed ? [sandboxed.procs] : [],
    });
    // The floor as it was measured before, its programs free processes of the machine.
    const hostFloor = await eventFloor({
      argv: ['/usr/bin/python3', '-c', paced],
      runs: concurrentRuns,
      linesPerRun: pacedLines,
    });
    const eventsPerS = Math.round(events / seconds);
    rounds.push({
      events_per_s: eventsPerS,
      lines_per_event: round((concurrentRuns * pacedLines) / events),
      floor_events_per_s: floor.events_per_s,
      floor_lines_per_event: floor.lines_per_event,
      floor_cpu_ms: floor.cpu_ms,
      host_floor_events_per_s: hostFloor.events_per_s,
      host_floor_lines_per_event: hostFloor.lines_per_event,
      ratio: round(eventsPerS / floor.events_per_s),
      // From the first run's `running` to the last's, at this client (the programs wait for all).
      start_spread_ms: Math.round(Math.max(...runningAt) - Math.min(...runningAt)),
      machine_busy_percent: busy,
      load1: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
    });
    log(`round ${round_ + 1}: ${JSON.stringify(rounds.at(-1))}`);
  }
  const perThousand = (ms) => round((ms * 1000) / Math.max(1, pacedEvents), 1);
  const median = (values) => percentile(values, 50);
  const eventsPerS = Math.round(median(rounds.map((r) => r.events_per_s)));
  const floorPerS = Math.round(median(rounds.map((r) => r.floor_events_per_s)));
  const pairRatio = median(rounds.map((r) => r.ratio));

  await sandboxed?.remove();
  await stack.call('DELETE', `/v1/claims/${claim.id}`);
  process.stdout.write(
    `${JSON.stringify({
      bench: 'runs',
      iterations,
      start_p50_ms: round(percentile(starts, 50)),
      start_p99_ms: round(percentile(starts, 99)),
      first_byte_p50_ms: round(percentile(firstBytes, 50)),
      event_latency_p50_ms: round(percentile(latencies, 50)),
      event_latency_p99_ms: round(percentile(latencies, 99)),
      // stdout events delivered per second over a paced phase (one write per line), the
      // median of the rounds.
      events_per_s: eventsPerS,
      paced_lines_per_event: round((pacedRounds * concurrentRuns * pacedLines) / pacedEvents),
      // What two bare hops (pipe → one Node process → unix socket → another) sustain with the
      // same programs: the ceiling of any event path on this machine (see lib/event-floor.mjs),
      // measured right after each paced phase; the median of the rounds.
      floor_events_per_s: floorPerS,
      // Where the floor's reader and programs ran: a sibling of the desktop's CPU cgroup with
      // its settings (null: outside any, as the host floor).
      floor_cgroup: sandboxed?.settings ?? null,
      // The same floor with its programs and reader as free processes of the machine (how the
      // floor was read before): on a loaded machine a desktop's cgroup gets one group's share.
      host_floor_events_per_s: Math.round(median(rounds.map((r) => r.host_floor_events_per_s))),
      // Each round's path and floor, side by side (the goal reads the median of their ratios).
      paced_rounds: rounds,
      // CPU per 1,000 events of each part of this stack over the paced phases (schedstat, exact
      // to the µs): the path's cost at each hop, to compare with the floor's reader and sink.
      cpu_ms_per_1k_events: Object.fromEntries(
        Object.entries(stageSum).map(([k, ms]) => [k, perThousand(ms)]),
      ),
      // How long the desktop's cgroup (guest daemon and the runs' programs) was held back by its
      // CPU quota over the paced phases (null: no cgroup with a quota found).
      pool_cpu: poolCpu,
      throttled_ms: throttled === null ? null : Math.round(throttled),
      worker_cpu_ms_per_1k_events: perThousand(stageSum.worker),
      api_cpu_ms_per_1k_events: perThousand(stageSum.api),
      // Where the last paced phase's CPU went on the whole machine (ms by process name; the
      // runs' programs are children of the guest daemon's shell), this stack's and others'.
      paced_cpu_ms_by_process: processCpu,
      // Transactions committed over the paced phase (every process) per 1,000 events: how
      // much the worker's group commit gathers.
      paced_commits_per_1k_events: perThousand(commits),
      // Unpaced (awk as fast as it can): the pipe coalesces lines into few large events.
      bulk_lines_per_s: isPacedOnly ? null : Math.round((concurrentRuns * linesPerRun) / seconds),
      bulk_events_per_s: isPacedOnly ? null : Math.round(events / seconds),
      concurrent_runs: concurrentRuns,
      lines_per_run: linesPerRun,
      paced_lines_per_run: pacedLines,
      lost,
      // The goal of issue 38 as a ratio to this run's floor (the absolute 20,000 events/s sat
      // above what two bare hops sustain on a loaded 2-core machine).
      goals: [eventsGoal(eventsPerS, floorPerS, pairRatio)],
    })}\n`,
  );
} finally {
  agent.destroy();
  await stack.stop();
}

/** cpuCgroupOf: the directory of process `pid`'s CPU cgroup (v1 cpu hierarchy, or v2), or null. */
function cpuCgroupOf(pid) {
  try {
    let dir = null;
    for (const line of readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n')) {
      const [, controllers, path] = line.split(':');
      if (controllers === '') dir = { v: 2, dir: `/sys/fs/cgroup${path}` };
      else if (controllers?.split(',').includes('cpu'))
        return { v: 1, dir: `/sys/fs/cgroup/${controllers}${path}` };
    }
    return dir;
  } catch {
    return null;
  }
}

/**
 * cgroupThrottledMs: a reader of the CPU time the kernel held process `pid`'s cgroup back by its
 * quota (cgroup v1 cpu.stat throttled_time, v2 throttled_usec), in ms; reads null without one.
 */
function cgroupThrottledMs(pid) {
  const file = cpuCgroupOf(pid) && `${cpuCgroupOf(pid).dir}/cpu.stat`;
  return () => {
    if (!file) return null;
    try {
      const stat = readFileSync(file, 'utf8');
      const v1 = /throttled_time (\d+)/.exec(stat);
      if (v1) return Number(v1[1]) / 1e6;
      const v2 = /throttled_usec (\d+)/.exec(stat);
      return v2 ? Number(v2[1]) / 1e3 : null;
    } catch {
      return null;
    }
  };
}

/**
 * floorCgroup makes a sibling of the desktop's CPU cgroup (process `pid`'s) with the same CPU
 * settings (v1 shares and quota, v2 weight and max), for the floor's reader and programs: a run's
 * programs and the guest daemon that reads them share their desktop's cgroup, which competes for
 * the machine as one group beside every other process (all desktops under one parent), so a
 * floor whose programs are free processes of the machine is not this path's ceiling on a loaded
 * machine. Answers the cgroup.procs file and a remove(); null when it cannot (no cgroup, no
 * permission): the floor then runs as before, and `floor_cgroup` says so.
 */
function floorCgroup(pid) {
  const desktop = cpuCgroupOf(pid);
  if (!desktop) return null;
  const dir = `${desktop.dir}-bench-floor`;
  const files =
    desktop.v === 1
      ? ['cpu.shares', 'cpu.cfs_period_us', 'cpu.cfs_quota_us']
      : ['cpu.weight', 'cpu.max'];
  try {
    mkdirSync(dir);
    for (const file of files)
      writeFileSync(`${dir}/${file}`, readFileSync(`${desktop.dir}/${file}`, 'utf8').trim());
  } catch (err) {
    log(`the floor runs outside a desktop-like cgroup (${err.message})`);
    try {
      rmdirSync(dir);
    } catch {
      // never made
    }
    return null;
  }
  return {
    procs: `${dir}/cgroup.procs`,
    settings: Object.fromEntries(
      files.map((file) => [file, readFileSync(`${dir}/${file}`, 'utf8').trim()]),
    ),
    async remove() {
      for (let attempt = 0; attempt < 50; attempt++) {
        try {
          rmdirSync(dir);
          return;
        } catch {
          await new Promise((r) => setTimeout(r, 100)); // its last processes are still exiting
        }
      }
    },
  };
}

/** eventsGoal: run events per second at least 85 % of the same run's two-hop floor. */
function eventsGoal(eventsPerS, floorPerS, pairRatio) {
  return {
    goal: "events_per_s >= 0.85 × floor_events_per_s (median of the rounds' ratios)",
    value: eventsPerS,
    floor: floorPerS,
    limit: Math.round(0.85 * floorPerS),
    ratio: round(pairRatio),
    pass: pairRatio >= 0.85,
  };
}
