// Client access to the test API server: a KubeConfig object for @kubernetes/client-node and the
// same as a kubeconfig file (for kubectl, helm or a process under test).
import { writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

const NAME = 'cubicle-test';

/** makeKubeConfig trusts `caPem` (the API server's self-signed serving cert) and sends `token`. */
export function makeKubeConfig(server: string, token: string, caPem: string): KubeConfig {
  const kubeconfig = new KubeConfig();
  kubeconfig.loadFromOptions({
    clusters: [
      { name: NAME, server, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false },
    ],
    users: [{ name: 'admin', token }],
    contexts: [{ name: NAME, cluster: NAME, user: 'admin' }],
    currentContext: NAME,
  });
  return kubeconfig;
}

/** writeKubeconfigFile writes a kubeconfig (JSON is valid YAML) readable only by its owner. */
export function writeKubeconfigFile(
  path: string,
  server: string,
  token: string,
  caPem: string,
): void {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: NAME,
        cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') },
      },
    ],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: NAME, context: { cluster: NAME, user: 'admin' } }],
    'current-context': NAME,
  };
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
}

/**
 * getInsecure is a GET against the API server before its certificate is known to us (the
 * readiness poll right after start-up). Only used on loopback, towards the process we started.
 */
export function getInsecure(url: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { rejectUnauthorized: false, headers: { authorization: `Bearer ${token}` }, timeout: 5000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}
