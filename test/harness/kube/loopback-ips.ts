// Own loopback addresses for simulated pods, as a pod network gives each pod its own IP: every
// guest driver can then listen on the same port (8080) side by side. Linux routes all of
// 127.0.0.0/8 to the loopback interface, so any 127.x.y.z can be bound without setup.
import { randomInt } from 'node:crypto';
import { createServer } from 'node:net';

function canBind(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export interface LoopbackIpPool {
  /** allocate returns an unused 127.x.y.z on which every port in `ports` is free right now. */
  allocate(ports: number[]): Promise<string>;
  release(ip: string): void;
}

/**
 * createLoopbackIpPool hands out 127.x.y.1–254 with x ≥ 100 (never 127.0.0.1's neighbourhood).
 * x and y are random per pool so that agents in parallel test workers rarely meet; when they do,
 * the bind check skips addresses whose ports someone else holds.
 */
export function createLoopbackIpPool(): LoopbackIpPool {
  const prefix = `127.${randomInt(100, 255)}.${randomInt(0, 256)}`;
  const used = new Set<string>();
  return {
    allocate: async (ports) => {
      for (let host = 1; host <= 254; host += 1) {
        const ip = `${prefix}.${host}`;
        if (used.has(ip)) continue;
        // Reserve before the async check so two concurrent allocations never pick the same one.
        used.add(ip);
        const free = await Promise.all(ports.map((port) => canBind(ip, port)));
        if (free.every(Boolean)) return ip;
        used.delete(ip);
      }
      throw new Error(`no free loopback address left in ${prefix}.0/24`);
    },
    release: (ip) => {
      used.delete(ip);
    },
  };
}
