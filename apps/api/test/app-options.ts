// What every app needs besides its connections, for suites that do not exercise it themselves:
// buildApp takes no optional dependency, so a suite about API keys still gets viewer keys and a
// keyring (made fresh here, never a fixed value).
import { newKeyringSpec, parseKeyring } from '@cubicle/control-plane';
import { generateViewerKeySet, parseViewerKeys } from '@cubicle/viewer';
import type { BuildOptions } from '../src/app.js';

export function testAppOptions(
  queuePrefix: string,
): Pick<BuildOptions, 'queuePrefix' | 'viewer' | 'keyring'> {
  return {
    queuePrefix,
    viewer: { keys: parseViewerKeys(generateViewerKeySet('test')), webUrl: 'https://web.test' },
    keyring: parseKeyring(newKeyringSpec()),
  };
}
