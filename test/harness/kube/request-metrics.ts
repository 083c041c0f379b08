// How many requests of a kind the test API server has served, from its own /metrics
// (apiserver_request_total): tests that hold a code path to a number of API calls read it before
// and after. The counter has no user label, so the window must hold only the calls under test.
import { getInsecure } from './kubeconfig.js';
import type { KubeCluster } from './start-cluster.js';

export interface RequestKind {
  /** As the API server counts it: GET, LIST, WATCH, PATCH, POST, PUT, DELETE. */
  verb: string;
  /** e.g. pods, secrets */
  resource: string;
  /** e.g. status; '' (the default) is the object itself. */
  subresource?: string;
}

/** apiRequestCount sums apiserver_request_total over every answer code for one kind of request. */
export async function apiRequestCount(cluster: KubeCluster, kind: RequestKind): Promise<number> {
  const { status, body } = await getInsecure(`${cluster.server}/metrics`, cluster.token);
  if (status !== 200) throw new Error(`GET /metrics answered ${status}`);
  const wanted = [
    `verb="${kind.verb}"`,
    `resource="${kind.resource}"`,
    `subresource="${kind.subresource ?? ''}"`,
  ];
  let total = 0;
  for (const line of body.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = line.slice(line.indexOf('{'), line.lastIndexOf('}') + 1);
    if (wanted.every((w) => labels.includes(w))) total += Number(line.slice(line.lastIndexOf(' ')));
  }
  return total;
}
