// `npm run db:migrate`: migrate DATABASE_URL when given, else the embedded postgres under
// .cubicle/ (the running one of `npm start`, or one started just for this and stopped after).
import { migrateDatabase } from './data.mjs';
import { withEmbeddedDatabase } from './embedded-database.mjs';
import { dim, say, step } from './ui.mjs';

export async function migrateCommand(root) {
  const log = (line) => say(dim(line));
  if (process.env.DATABASE_URL) {
    await step('migrate DATABASE_URL', () => migrateDatabase(root, process.env.DATABASE_URL, log));
    return;
  }
  // withEmbeddedDatabase migrates before handing over the URL: nothing is left to do here.
  await withEmbeddedDatabase(root, 'npm run db:migrate', { step, log }, async () => {});
}
