import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** WorkerMetrics are the worker's Prometheus series (served by the metrics listener in main.ts). */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly reclaims = new Counter({
    name: 'cubicle_reclaims_total',
    help: 'Claims released by the worker, by reason',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly reclaimDelay = new Histogram({
    name: 'cubicle_reclaim_delay_seconds',
    help: 'Seconds from a claim becoming due to its release',
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [this.registry],
  });
  readonly jobDuration = new Histogram({
    name: 'cubicle_job_duration_seconds',
    help: 'Job handler duration by job name and outcome',
    labelNames: ['job', 'outcome'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
    registers: [this.registry],
  });

  /**
   * trackPerSandbox exposes how many per-sandbox entries the process holds (`map` label): they
   * must fall back to zero once sandboxes are released (the scale test reads this).
   */
  trackPerSandbox(stats: () => Record<string, number>) {
    new Gauge({
      name: 'cubicle_worker_per_sandbox_entries',
      help: 'Per-sandbox entries held in this worker process, by map',
      labelNames: ['map'],
      registers: [this.registry],
      collect() {
        for (const [map, n] of Object.entries(stats())) this.set({ map }, n);
      },
    });
  }

  recordReclaim(reason: string, delaySeconds: number) {
    this.reclaims.inc({ reason });
    this.reclaimDelay.observe(Math.max(0, delaySeconds));
  }
}
