// Raw requests to the test API server, for checks the generated client cannot make: a
// server-side dry run with strict field validation (`?dryRun=All&fieldValidation=Strict`).
// @kubernetes/client-node serialises through its models and drops unknown fields before sending,
// and `helm template --validate` / `helm install --dry-run=server` let unknown fields and
// out-of-range values through (measured here), so this is how a rendered chart is checked.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import type { KubeCluster } from './start-cluster.js';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface RawAnswer {
  status: number;
  body: string;
  /** The parsed body when it is JSON. */
  json: unknown;
  /** Warning headers (strict validation refuses; warn validation would only put them here). */
  warnings: string[];
}

export interface RawClient {
  request(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
    headers?: Record<string, string>,
  ): Promise<RawAnswer>;
}

/** rawClient talks to the cluster as its admin (or as `token`), trusting its self-signed cert. */
export function rawClient(cluster: KubeCluster, token = cluster.token): RawClient {
  const ca = readFileSync(join(cluster.dir, 'certs', 'apiserver.crt'));
  return {
    request: (method, path, body, contentType = 'application/json', headers = {}) =>
      new Promise((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const req = request(
          `${cluster.server}${path}`,
          {
            method,
            ca,
            timeout: 20_000,
            headers: {
              authorization: `Bearer ${token}`,
              accept: 'application/json',
              ...(payload !== undefined && {
                'content-type': contentType,
                'content-length': Buffer.byteLength(payload),
              }),
              ...headers,
            },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => {
              let json: unknown;
              try {
                json = JSON.parse(text);
              } catch {
                json = undefined;
              }
              const warning = res.headers.warning;
              resolve({
                status: res.statusCode ?? 0,
                body: text,
                json,
                warnings: warning ? [warning].flat() : [],
              });
            });
          },
        );
        req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
        req.on('error', reject);
        req.end(payload);
      }),
  };
}

interface ResourceInfo {
  plural: string;
  namespaced: boolean;
}

/**
 * discoverResources maps `apiVersion/Kind` to the resource's plural and scope, from the server's
 * own discovery documents (so a CRD-backed kind is found the same way as a built-in one).
 */
export async function discoverResources(client: RawClient): Promise<Map<string, ResourceInfo>> {
  const index = new Map<string, ResourceInfo>();
  const versions: string[] = ['v1'];
  const groups = (await client.request('GET', '/apis')).json as {
    groups: { versions: { groupVersion: string }[] }[];
  };
  for (const g of groups.groups) for (const v of g.versions) versions.push(v.groupVersion);
  await Promise.all(
    versions.map(async (gv) => {
      const answer = await client.request('GET', gv === 'v1' ? '/api/v1' : `/apis/${gv}`);
      if (answer.status !== 200) return;
      const list = answer.json as {
        resources: { name: string; kind: string; namespaced: boolean }[];
      };
      for (const r of list.resources) {
        if (r.name.includes('/')) continue; // subresources
        index.set(`${gv}/${r.kind}`, { plural: r.name, namespaced: r.namespaced });
      }
    }),
  );
  return index;
}

/** collectionPath is where an object of this apiVersion/kind is created. */
export function collectionPath(
  index: Map<string, ResourceInfo>,
  obj: KubeObject,
  defaultNamespace: string,
): string {
  const info = index.get(`${obj.apiVersion}/${obj.kind}`);
  if (!info) throw new Error(`the API server does not serve ${obj.apiVersion} ${obj.kind}`);
  const base = obj.apiVersion.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  if (!info.namespaced) return `${base}/${info.plural}`;
  const ns = obj.metadata.namespace ?? defaultNamespace;
  return `${base}/namespaces/${encodeURIComponent(ns)}/${info.plural}`;
}

/**
 * strictDryRun creates `obj` as a server-side dry run with strict field validation: the API
 * server runs defaulting, validation and admission, stores nothing, and refuses unknown or
 * duplicate fields instead of dropping them.
 */
export function strictDryRun(
  client: RawClient,
  index: Map<string, ResourceInfo>,
  obj: KubeObject,
  defaultNamespace: string,
): Promise<RawAnswer> {
  const path = collectionPath(index, obj, defaultNamespace);
  return client.request('POST', `${path}?dryRun=All&fieldValidation=Strict`, obj);
}

/** createObject creates `obj` for real (strict field validation too). */
export function createObject(
  client: RawClient,
  index: Map<string, ResourceInfo>,
  obj: KubeObject,
  defaultNamespace: string,
): Promise<RawAnswer> {
  const path = collectionPath(index, obj, defaultNamespace);
  return client.request('POST', `${path}?fieldValidation=Strict`, obj);
}
