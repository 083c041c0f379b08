export {
  createLocalBackend,
  desktopIdOf,
  localBackendScope,
  type LocalBackendOptions,
} from './local/local-backend.js';
