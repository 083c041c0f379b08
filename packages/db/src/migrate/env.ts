import { envVars, loadEnv } from '@cubicle/config';
import { z } from 'zod';

/** The migration CLI's configuration. */
export const env = loadEnv(
  'cubicle-migrate',
  z.object({ DATABASE_URL: envVars.databaseUrl() }),
  process.env,
);
