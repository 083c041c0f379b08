// The transport floor of bench:runs' paced phase: the same programs (given as argv), their
// output read from pipes by one Node process that forwards every chunk as one JSON message over
// a unix socket to a second Node process, which parses and counts them. That is two hops of the
// real event path (guest → worker) with nothing else: no authentication, no redaction, no
// database, no Redis, no API, no SSE. What this sustains on a machine bounds what the whole path
// can (it has those two hops and four more), so a goal above it is out of this machine's reach.
// Run as a script with `sink <socket>` it is the second process.
import { fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** cpuMs: a process's own CPU time (ms) and that of its reaped children, from /proc. */
const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { own: (+f[11] + +f[12]) * 10, children: (+f[13] + +f[14]) * 10 };
};

if (process.argv[2] === 'sink') {
  let events = 0;
  let first = 0;
  let last = 0;
  let buffered = '';
  const server = net.createServer((socket) => {
    socket.setEncoding('utf8');
    socket.on('data', (text) => {
      buffered += text;
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const message = JSON.parse(buffered.slice(0, end));
        buffered = buffered.slice(end + 1);
        if (message.type === 'stdout') {
          events++;
          first ||= performance.now();
          last = performance.now();
        } else if (message.type === 'end') {
          process.send({ events, ms: last - first, cpuMs: cpuMs(process.pid).own - startupMs });
        }
      }
    });
  });
  // Its own start-up (loading Node) is not the floor's.
  let startupMs = 0;
  server.listen(process.argv[3], () => {
    startupMs = cpuMs(process.pid).own;
    process.send('ready');
  });
} else if (process.argv[2] === 'reader') {
  // The first hop as a process of its own (eventFloor's `cgroupProcs`): told what to run once it
  // has been placed, it forwards like the in-process reader below and reports its CPU.
  process.once('message', async ({ argv, runs, socketPath }) => {
    const before = cpuMs(process.pid);
    await forward(argv, runs, socketPath);
    const after = cpuMs(process.pid);
    process.send({ programs: after.children - before.children, reader: after.own - before.own });
  });
  process.send('ready');
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  throw new Error('event-floor.mjs is a module (or `sink <socket>`, `reader`)');
}

/** forward runs `runs` copies of argv and sends each stdout chunk to the sink as one message. */
async function forward(argv, runs, socketPath) {
  const out = net.connect(socketPath);
  await once(out, 'connect');
  await Promise.all(
    Array.from({ length: runs }, async () => {
      const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (data) => out.write(`${JSON.stringify({ type: 'stdout', data })}\n`));
      const [code] = await once(child, 'exit');
      if (code !== 0) throw new Error(`a floor program exited ${code}`);
    }),
  );
  out.end(`${JSON.stringify({ type: 'end' })}\n`);
}

/** answerOf: the sink's next message; fails if it exits first (never a hung bench). */
const answerOf = (sink) =>
  Promise.race([
    once(sink, 'message'),
    once(sink, 'exit').then(([code]) => {
      throw new Error(`the floor sink exited (${code})`);
    }),
  ]);

/**
 * eventFloor runs `runs` copies of `argv` and forwards their stdout chunks as described above;
 * resolves with the events per second the sink counted (first to last event), lines per event
 * (`linesPerRun` lines each) and the CPU each part used. With `cgroupProcs` (cgroup.procs files)
 * the reader is a process of its own, written into those cgroups before it starts the programs
 * (which inherit them): the first hop and its programs then compete for the CPU as the guest
 * daemon and a run's programs do inside a desktop's cgroup.
 */
export async function eventFloor({ argv, runs, linesPerRun, cgroupProcs = [] }) {
  const dir = mkdtempSync(join(tmpdir(), 'cubicle-event-floor-'));
  const socketPath = join(dir, 'sink.sock');
  const sink = fork(fileURLToPath(import.meta.url), ['sink', socketPath]);
  let reader = null;
  try {
    const [ready] = await answerOf(sink);
    if (ready !== 'ready') throw new Error('the floor sink did not start');
    let cpu;
    const done = answerOf(sink);
    if (cgroupProcs.length > 0) {
      reader = fork(fileURLToPath(import.meta.url), ['reader']);
      await answerOf(reader);
      for (const file of cgroupProcs) writeFileSync(file, String(reader.pid));
      const finished = answerOf(reader);
      reader.send({ argv, runs, socketPath });
      [cpu] = await finished;
    } else {
      const before = cpuMs(process.pid);
      await forward(argv, runs, socketPath);
      const after = cpuMs(process.pid);
      // This bench process's CPU is the reader's (the floor runs after the other phases).
      cpu = { programs: after.children - before.children, reader: after.own - before.own };
    }
    const [{ events, ms, cpuMs: sinkMs }] = await done;
    return {
      events_per_s: Math.round(events / (ms / 1000)),
      lines_per_event: Number(((runs * linesPerRun) / events).toFixed(2)),
      cpu_ms: { ...cpu, sink: sinkMs },
    };
  } finally {
    sink.kill();
    reader?.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
