// Prisma CLI configuration. The CLI is used here only for `prisma generate` (offline, see
// scripts/prisma-generate.mjs); migrations are applied by our own runner, which writes the same
// _prisma_migrations rows so `prisma migrate deploy` remains valid where the engine exists.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost/cubicle' },
});
