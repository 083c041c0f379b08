#!/usr/bin/env node
// `cubicle-admin <command>` inside the api image: the operator CLI of `npm run cubicle` (tenants
// and their API keys, packages/tenancy) against the Pod's own DATABASE_URL, e.g.
//   kubectl exec deploy/<release>-cubicle-api -- cubicle-admin tenant create --name default
// images/api/Dockerfile copies it to /opt/cubicle/images/api/ and links /usr/local/bin/cubicle-admin
// to it; the imports are relative to the built workspace, so it runs the same from a checkout
// (`DATABASE_URL=… node images/api/cubicle-admin.mjs tenant list`), without the embedded database.
import { runTenancyCli, needsDatabase } from '../../packages/tenancy/dist/cli/index.js';
import { createDb } from '../../packages/db/dist/index.js';

const argv = process.argv.slice(2);
const io = { out: (line) => console.log(line), err: (line) => console.error(line) };
try {
  if (!needsDatabase(argv)) process.exitCode = await runTenancyCli(argv, undefined, io);
  else if (!process.env.DATABASE_URL) {
    console.error('cubicle-admin: DATABASE_URL is not set');
    process.exitCode = 2;
  } else {
    const db = createDb({ databaseUrl: process.env.DATABASE_URL, maxConnections: 2 });
    try {
      process.exitCode = await runTenancyCli(argv, db, io);
    } finally {
      await db.$disconnect();
    }
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
}
