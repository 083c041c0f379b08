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
//   worker_cpu_ms_per_1k_events / api_cpu_ms_per_1k_events
//                         CPU time the worker and the API spent over the paced phase per 1,000
//                         events: what each process costs per event, far less sensitive to other
//                         load on the machine than events_per_s (machine_busy_percent beside it)
//   floor_events_per_s   the paced programs through two bare hops (lib/event-floor.mjs): what
//                         any event path could sustain on this machine, for reading the above
// --paced-only skips the start, latency and bulk phases (a quick look at the event path).
// Prints one JSON line.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { cpuSnapshot, cpuSpent } from './lib/process-cpu.mjs';
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
  await stack.warmPool('runs', { image: 'local', autoscaling: { min: 0, initial: 1, max: 1 } }, 1);
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
  // Postgres → Redis → API → SSE) sustains in events, not bytes.
  log(`paced: ${concurrentRuns} runs × ${pacedLines} lines, one write each…`);
  const paced = `import sys, time
w = sys.stdout.write
for i in range(${pacedLines}):
    w('%d\\n' % i); sys.stdout.flush(); time.sleep(${pacedSleep})`;
  const pacedRuns = await Promise.all(
    Array.from({ length: concurrentRuns }, () =>
      create({ argv: ['/usr/bin/python3', '-c', paced] }),
    ),
  );
  const p0 = nowMs();
  const apiPid = stack.apis[0].pid;
  const cpu0 = { worker: cpuMs(stack.workerPid), api: cpuMs(apiPid), machine: machineCpu() };
  const processes0 = cpuSnapshot();
  const commits0 = await commitCount(stack.db);
  let pacedEvents = 0;
  let pacedFirst = null;
  let pacedLast = 0;
  await Promise.all(
    pacedRuns.map(async (run) => {
      let text = '';
      let next = 1;
      let final = null;
      await follow(stack.url, run.id, headers, (event, at) => {
        if (event.seq !== next) lost += 1;
        next = event.seq + 1;
        final = event;
        if (event.type !== 'stdout') return;
        pacedEvents += 1;
        pacedFirst ??= at;
        pacedLast = Math.max(pacedLast, at);
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
  const pacedSeconds = (pacedLast - (pacedFirst ?? p0)) / 1000;
  const cpu1 = { worker: cpuMs(stack.workerPid), api: cpuMs(apiPid), machine: machineCpu() };
  const processCpu = cpuSpent(processes0, cpuSnapshot());
  const commits = (await commitCount(stack.db)) - commits0;
  const perThousand = (ms) => round((ms * 1000) / Math.max(1, pacedEvents), 1);

  await stack.call('DELETE', `/v1/claims/${claim.id}`);
  // The same programs through two bare hops (lib/event-floor.mjs), on this machine, now.
  log('floor: the paced programs through a bare two-hop forwarder…');
  await waitQuiet({ settleMs: 2000 });
  const floor = await eventFloor({
    argv: ['/usr/bin/python3', '-c', paced],
    runs: concurrentRuns,
    linesPerRun: pacedLines,
  });
  process.stdout.write(
    `${JSON.stringify({
      bench: 'runs',
      iterations,
      start_p50_ms: round(percentile(starts, 50)),
      start_p99_ms: round(percentile(starts, 99)),
      first_byte_p50_ms: round(percentile(firstBytes, 50)),
      event_latency_p50_ms: round(percentile(latencies, 50)),
      event_latency_p99_ms: round(percentile(latencies, 99)),
      // stdout events delivered per second over the paced phase (one write per line).
      events_per_s: Math.round(pacedEvents / pacedSeconds),
      paced_lines_per_event: round((concurrentRuns * pacedLines) / pacedEvents),
      // What two bare hops (pipe → one Node process → unix socket → another) sustain with the
      // same programs: the ceiling of any event path on this machine (see lib/event-floor.mjs).
      floor_events_per_s: floor.events_per_s,
      floor_lines_per_event: floor.lines_per_event,
      floor_cpu_ms: floor.cpu_ms,
      worker_cpu_ms_per_1k_events: perThousand(cpu1.worker - cpu0.worker),
      api_cpu_ms_per_1k_events: perThousand(cpu1.api - cpu0.api),
      machine_busy_percent: Math.round(
        100 *
          (1 -
            (cpu1.machine.idle - cpu0.machine.idle) /
              Math.max(1, cpu1.machine.total - cpu0.machine.total)),
      ),
      // Where the paced phase's CPU went (ms by process; the runs' programs are children of
      // the guest daemon's shell): the machine is the limit here, not one process.
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
      goals: [eventsGoal(Math.round(pacedEvents / pacedSeconds), floor.events_per_s)],
    })}\n`,
  );
} finally {
  agent.destroy();
  await stack.stop();
}

/** eventsGoal: run events per second at least 85 % of the same run's two-hop floor. */
function eventsGoal(eventsPerS, floorPerS) {
  return {
    goal: 'events_per_s >= 0.85 × floor_events_per_s',
    value: eventsPerS,
    floor: floorPerS,
    limit: Math.round(0.85 * floorPerS),
    ratio: round(eventsPerS / floorPerS),
    pass: eventsPerS >= 0.85 * floorPerS,
  };
}
