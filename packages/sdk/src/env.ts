/**
 * ClientEnv is what a client takes from the environment when its options leave it out, under
 * the names the Python SDK, the CLI and the Terraform provider read: `CUBICLE_API_KEY`,
 * `CUBICLE_URL`, and `CUBICLE_LOG=debug` for request logging.
 */
export interface ClientEnv {
  apiKey: string | undefined;
  url: string | undefined;
  log: string | undefined;
}

/**
 * readClientEnv reads the variables where a process environment exists (Node, Bun, Deno with
 * env access); in a browser there is none and every field is undefined.
 */
export function readClientEnv(): ClientEnv {
  let env: Record<string, string | undefined> | undefined;
  try {
    env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  } catch {
    // Deno without --allow-env throws on access: the same as no environment.
  }
  const read = (name: string) => (env?.[name] ? env[name] : undefined);
  return { apiKey: read('CUBICLE_API_KEY'), url: read('CUBICLE_URL'), log: read('CUBICLE_LOG') };
}
