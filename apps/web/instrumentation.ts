/**
 * register runs once when the server starts: parsing the environment here makes a bad variable
 * stop `next start` at once, naming it, instead of failing the first request.
 */
export async function register() {
  // eslint-disable-next-line no-restricted-properties -- Next's runtime marker, not configuration
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { getEnv } = await import('./lib/env');
  getEnv();
}
