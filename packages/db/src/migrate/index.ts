export { migrate, MigrationError, type MigrateOptions } from './migrate.js';
export { readMigrations, defaultMigrationsDir, type LocalMigration } from './read-migrations.js';
