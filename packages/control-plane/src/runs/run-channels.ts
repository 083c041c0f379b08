import { z } from 'zod';
import { RunEvent } from '@cubicle/contract/api';

/**
 * RunRedis is the part of a Redis connection runs need (ioredis fits): pub/sub for events and
 * control nudges, and one list per run for its pending input (stdin, cancel) so input sent
 * before the worker holds the run's stream, or while a message is lost, still arrives in order.
 */
export interface RunRedis {
  publish(channel: string, message: string): Promise<unknown>;
  rpush(key: string, ...values: string[]): Promise<unknown>;
  expire(key: string, seconds: number): Promise<unknown>;
  lpop(key: string, count: number): Promise<string[] | null>;
  del(...keys: string[]): Promise<unknown>;
}

/** Each run's events are published (after they are committed) on a channel of its own. */
export const runEventsChannel = (prefix: string, runId: string) => `${prefix}:run-events:${runId}`;
/** Workers listen here for "this run has input waiting" (message: the run id). */
export const runControlChannel = (prefix: string) => `${prefix}:run-control`;
/** The run's pending input, oldest first. */
export const runInputKey = (prefix: string, runId: string) => `${prefix}:run-input:${runId}`;
/** Input left for a run that never reads it expires with it. */
export const RUN_INPUT_TTL_SECONDS = 86_400;

/** RunInput is one item of a run's input list. */
export const RunInput = z.discriminatedUnion('type', [
  z.object({ type: z.literal('stdin'), data: z.string(), encoding: z.enum(['utf8', 'base64']) }),
  z.object({ type: z.literal('stdin_end') }),
  z.object({ type: z.literal('cancel'), grace_ms: z.int().min(0) }),
]);
export type RunInput = z.infer<typeof RunInput>;

/** A published message is the events of one commit, in seq order. */
export const RunEventBatch = z.array(RunEvent);
