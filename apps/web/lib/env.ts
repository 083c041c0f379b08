import { z } from 'zod';

/** The web process's configuration, parsed once on the server. */
const WebEnv = z.object({
  CUBICLE_API_URL: z.url().default('http://127.0.0.1:8080'),
});

function load() {
  const result = WebEnv.safeParse(process.env);
  if (!result.success) {
    const names = result.error.issues.map((i) => String(i.path[0])).join(', ');
    throw new Error(`cubicle-web: invalid environment: ${names}`);
  }
  return result.data;
}

export const env = load();
