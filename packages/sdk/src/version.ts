/**
 * SDK_VERSION is this package's version (package.json's `version`; src/version.test.ts fails when
 * they differ). It is sent in the User-Agent, so the API's logs can tell SDK releases apart.
 */
export const SDK_VERSION = '0.2.0';

/** USER_AGENT names the SDK and its version, as the Python SDK sends `cubicle-python/<version>`. */
export const USER_AGENT = `cubicle-typescript/${SDK_VERSION}`;
