// The node's certificates (openssl): a CA of the node, and a client certificate signed by it that
// kube-apiserver presents to kubelet for logs, exec and port-forward (group system:masters).
// kubelet trusts that CA for client certificates and makes its own self-signed serving cert.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { sh } from './host.js';

export interface NodePki {
  caCert: string;
  apiserverClientCert: string;
  apiserverClientKey: string;
}

export async function makeNodePki(dir: string): Promise<NodePki> {
  const pki = join(dir, 'pki');
  mkdirSync(pki, { recursive: true, mode: 0o700 });
  const caKey = join(pki, 'ca.key');
  const caCert = join(pki, 'ca.crt');
  const key = join(pki, 'apiserver-kubelet-client.key');
  const csr = join(pki, 'apiserver-kubelet-client.csr');
  const cert = join(pki, 'apiserver-kubelet-client.crt');
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await sh('openssl', [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    caKey,
    '-out',
    caCert,
    '-days',
    '2',
    '-subj',
    '/CN=cubicle-real-node-ca',
  ]);
  await sh('openssl', [
    'req',
    ...ec,
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    '/O=system:masters/CN=kube-apiserver-kubelet-client',
  ]);
  await sh('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    caCert,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-out',
    cert,
    '-days',
    '2',
  ]);
  return { caCert, apiserverClientCert: cert, apiserverClientKey: key };
}
