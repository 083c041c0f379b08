export { createLocalBackend, type LocalBackendOptions } from './local/local-backend.js';
