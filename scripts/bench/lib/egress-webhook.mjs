// The egress bench's last phase: the time from a denied connection in a claimed desktop to its
// `egress.denied` webhook, through the whole Cubicle (API, worker with its egress point, real
// desktop, private Postgres and Redis) on the fake internet. Each attempt goes to its own
// destination (a new event line, so a webhook each), spaced so each is its own batch.
import { once } from 'node:events';
import { createServer } from 'node:http';
import { log, startStack } from './stack.mjs';

const ATTEMPTS = 20;

// Inside the desktop: one denied connection every 400 ms, each to its own port; prints the
// epoch ms of each attempt. Same machine, same clock as the receiver.
const ATTEMPT_SCRIPT = `
import socket, time, json
times = {}
for i in range(${ATTEMPTS}):
    port = 30000 + i
    times[port] = time.time() * 1000
    try:
        s = socket.create_connection(('203.0.113.21', port), timeout=3); s.sendall(b'x'); s.recv(1)
    except OSError:
        pass
    time.sleep(0.4)
print(json.dumps(times))
`;

export async function denialToWebhook({ dns, guard }) {
  const received = new Map();
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const at = Date.now();
      const payload = JSON.parse(body);
      if (payload.type === 'egress.denied' && payload.data.port)
        received.set(payload.data.port, at);
      res.end('ok');
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  // Loopback receivers are an operator's opt-in, for the API and the worker alike.
  process.env.CUBICLE_WEBHOOKS_ALLOW_PRIVATE = '1';
  const stack = await startStack({
    workerEnv: { CUBICLE_EGRESS_UPSTREAM_DNS: dns, CUBICLE_EGRESS_UPSTREAM_GUARD: guard.join(',') },
  });
  try {
    const hook = await stack.call('POST', '/v1/webhooks', {
      url: `http://127.0.0.1:${receiver.address().port}/hook`,
      events: ['egress.denied'],
    });
    if (hook.status !== 201) throw new Error(`POST /v1/webhooks: ${hook.status}`);
    log('webhook phase: one desktop under an allowlist');
    await stack.warmPool(
      'egress-bench',
      {
        image: 'local',
        autoscaling: { min: 0, initial: 1, max: 1 },
        egress: { mode: 'allowlist', allow: ['allowed.example.test'], deny: [] },
      },
      1,
    );
    const claim = await stack.call('POST', '/v1/pools/egress-bench/claims', { ttl_seconds: 600 });
    if (claim.status !== 201) throw new Error(`claim: ${claim.status}`);
    const ran = await stack.call('POST', `/v1/claims/${claim.body.id}/shell`, {
      argv: ['/usr/bin/python3', '-c', ATTEMPT_SCRIPT],
      timeout_ms: 60_000,
    });
    if (ran.status !== 200) throw new Error(`shell: ${ran.status} ${JSON.stringify(ran.body)}`);
    const attempts = JSON.parse(ran.body.stdout);
    await stack
      .waitFor(async () => received.size >= ATTEMPTS, 15_000, 'the webhooks')
      .catch(() => undefined);
    const ms = Object.entries(attempts)
      .map(([port, at]) => (received.get(Number(port)) ?? NaN) - at)
      .filter(Number.isFinite);
    // Released and its pool deleted, so the worker destroys the desktop and removes its link
    // before the stack stops (a stopped worker leaves both behind for its successor).
    await stack.call('DELETE', `/v1/claims/${claim.body.id}`);
    await stack.call('DELETE', '/v1/pools/egress-bench');
    await stack
      .waitFor(
        async () => (await stack.db.sandbox.count({ where: { state: { not: 'deleted' } } })) === 0,
        60_000,
        'the desktop destroyed',
      )
      .catch((err) => log(err.message));
    return { ms };
  } finally {
    await stack.stop();
    receiver.close();
  }
}
