import type { z } from 'zod';

/** EnvError says which variables are bad and why, without echoing their values (they may be secrets). */
export class EnvError extends Error {
  readonly variables: string[];

  constructor(issues: { variable: string; problem: string }[]) {
    super('Invalid environment:\n' + issues.map((i) => `  ${i.variable}: ${i.problem}`).join('\n'));
    this.name = 'EnvError';
    this.variables = issues.map((i) => i.variable);
  }
}

/**
 * parseEnv validates an environment against a zod object whose keys are variable names.
 * It throws EnvError naming every bad variable; values are never included in the message.
 */
export function parseEnv<S extends z.ZodObject>(
  schema: S,
  source: Record<string, string | undefined>,
): z.infer<S> {
  const result = schema.safeParse(source);
  if (result.success) return result.data;
  throw new EnvError(
    result.error.issues.map((issue) => ({
      variable: String(issue.path[0] ?? '(environment)'),
      problem: issue.message,
    })),
  );
}

/**
 * loadEnv is parseEnv for a process's env.ts: on a bad variable it prints which one and exits
 * with status 78 (EX_CONFIG), before anything else starts.
 */
export function loadEnv<S extends z.ZodObject>(
  processName: string,
  schema: S,
  source: Record<string, string | undefined>,
): z.infer<S> {
  try {
    return parseEnv(schema, source);
  } catch (err) {
    if (err instanceof EnvError) {
      process.stderr.write(`${processName}: ${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
}
