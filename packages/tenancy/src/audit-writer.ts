import type { Db } from '@cubicle/db';
import { auditRow, type AuditEventInput } from './audit-events.js';
import { insertAuditEventRows, type AuditEventValues } from './repositories/audit-events.js';

export interface AuditWriter {
  /** write queues one event; resolves with its id once it is committed. */
  write(input: AuditEventInput): Promise<string>;
  /** settle resolves when every event queued so far is written (or failed). */
  settle(): Promise<void>;
}

// Bounds one statement's parameters (twelve arrays) and the work one failure redoes row by row.
const MAX_BATCH = 1_000;

/**
 * createAuditWriter writes audit events with group commit: while one INSERT is in flight, the
 * events that arrive wait and go together in the next multi-row INSERT. One request alone is
 * written at once (no added latency); a burst of 32 claims costs a few statements, not 32.
 * Events are not written with the change they record (they follow the response, as before);
 * a process killed in between loses them, which the request log still shows.
 */
export function createAuditWriter(db: Db): AuditWriter {
  let queue: { values: AuditEventValues; done: (err?: unknown) => void }[] = [];
  let flushing: Promise<void> | null = null;

  async function flushAll() {
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH);
      queue = queue.slice(batch.length);
      try {
        await insertRows(batch.map((e) => e.values));
        for (const e of batch) e.done();
      } catch (err) {
        if (batch.length === 1) batch[0]!.done(err);
        // One bad row (e.g. its tenant was just deleted) must not cost the others their events.
        else
          for (const e of batch)
            await insertRows([e.values]).then(
              () => e.done(),
              (rowErr: unknown) => e.done(rowErr),
            );
      }
    }
  }

  const insertRows = (rows: AuditEventValues[]) => insertAuditEventRows(db, rows);

  function kick() {
    if (flushing) return;
    flushing = flushAll().finally(() => {
      flushing = null;
      // An event queued between the loop's last check and this callback starts the next round.
      if (queue.length > 0) kick();
    });
  }

  return {
    async write(input) {
      const { id, values } = auditRow(input);
      return new Promise<string>((resolve, reject) => {
        queue.push({ values, done: (err) => (err ? reject(err) : resolve(id)) });
        kick();
      });
    },
    async settle() {
      while (flushing) await flushing;
    },
  };
}
