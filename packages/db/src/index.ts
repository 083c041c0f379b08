export { createDb, sqlPoolOf, type Db, type DbOptions } from './client.js';
export { sqlOf, statement, type Sql, type SqlTarget, type Statement } from './sql.js';
export { pingDatabase } from './ping.js';
export { BASE32_ALPHABET, encodeBase32, newId, ulid } from './ids.js';
export * from './generated/prisma/client.js';
