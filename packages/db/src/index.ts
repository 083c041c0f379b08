export { createDb, type Db, type DbOptions } from './client.js';
export { newId, ulid } from './ids.js';
export * from './generated/prisma/client.js';
