// Cluster DNS for the real node: A records of Services (<service>.<namespace>.svc.<domain> → its
// ClusterIP), served on the bridge's host address, port 53, which kubelet gives Pods as their
// nameserver (clusterDNS). It stands in for CoreDNS: the chart only needs Service names to
// resolve, and CoreDNS would be one more Go build of minutes (and ~100 MB) on every fresh machine.
// Nothing else is answered: names outside the cluster domain get REFUSED (there is no upstream:
// nothing leaves this machine), unknown cluster names NXDOMAIN, other types an empty answer.
import { createSocket, type Socket } from 'node:dgram';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

export const CLUSTER_DOMAIN = 'cluster.local';

const TYPE_A = 1;
const RCODE = { ok: 0, nxdomain: 3, refused: 5 } as const;

interface Question {
  name: string;
  type: number;
  /** Bytes of the question section (echoed in the answer). */
  raw: Buffer;
}

/** parseQuery reads the header's id and the first question; undefined when malformed. */
export function parseQuery(msg: Buffer): { id: number; question: Question } | undefined {
  if (msg.length < 12 || msg.readUInt16BE(4) < 1) return undefined;
  const labels: string[] = [];
  let at = 12;
  for (;;) {
    const length = msg[at];
    if (length === undefined || length > 63) return undefined;
    at += 1;
    if (length === 0) break;
    labels.push(
      msg
        .subarray(at, at + length)
        .toString('latin1')
        .toLowerCase(),
    );
    at += length;
  }
  if (at + 4 > msg.length) return undefined;
  return {
    id: msg.readUInt16BE(0),
    question: {
      name: labels.join('.'),
      type: msg.readUInt16BE(at),
      raw: msg.subarray(12, at + 4),
    },
  };
}

/** answer builds the response: `address` (IPv4) as one A record, or none, with `rcode`. */
export function answer(id: number, question: Question, rcode: number, address?: string): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  // QR, AA (authoritative for the cluster domain), RD copied as set, RA off.
  header.writeUInt16BE(0x8400 | 0x0100 | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(address ? 1 : 0, 6);
  const parts = [header, question.raw];
  if (address) {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // name: pointer to the question's
    record.writeUInt16BE(TYPE_A, 2);
    record.writeUInt16BE(1, 4); // class IN
    record.writeUInt32BE(5, 6); // TTL 5 s: Services come and go during a test
    record.writeUInt16BE(4, 10);
    address.split('.').forEach((octet, i) => record.writeUInt8(Number(octet), 12 + i));
    parts.push(record);
  }
  return Buffer.concat(parts);
}

export interface ClusterDns {
  address: string;
  /** Queries answered, by outcome (the test checks names really went through here). */
  counts: { a: number; nxdomain: number; refused: number };
  close(): Promise<void>;
}

/** startClusterDns serves Service names on `address`:53 from the API server's Services. */
export async function startClusterDns(
  kubeconfig: KubeConfig,
  address: string,
): Promise<ClusterDns> {
  const core = kubeconfig.makeApiClient(CoreV1Api);
  let services = new Map<string, string>();
  let listedAt = 0;
  let listing: Promise<void> | undefined;
  const refresh = () =>
    (listing ??= core
      .listServiceForAllNamespaces()
      .then((list) => {
        services = new Map(
          list.items
            .filter((s) => s.spec?.clusterIP && s.spec.clusterIP !== 'None')
            .map((s) => [`${s.metadata!.name}.${s.metadata!.namespace}`, s.spec!.clusterIP!]),
        );
        listedAt = Date.now();
      })
      .catch(() => undefined)
      .finally(() => (listing = undefined)));
  const counts = { a: 0, nxdomain: 0, refused: 0 };
  const suffix = `.svc.${CLUSTER_DOMAIN}`;
  const resolve = async (question: Question): Promise<{ rcode: number; address?: string }> => {
    if (!question.name.endsWith(suffix)) return { rcode: RCODE.refused };
    const key = question.name.slice(0, -suffix.length);
    // A name not seen yet may be a Service made a moment ago: list again (at most once a second).
    if (!services.has(key) && Date.now() - listedAt > 1000) await refresh();
    const ip = services.get(key);
    if (!ip) return { rcode: RCODE.nxdomain };
    return { rcode: RCODE.ok, address: question.type === TYPE_A ? ip : undefined };
  };
  await refresh();
  const socket: Socket = createSocket('udp4');
  socket.on('message', (msg, peer) => {
    const query = parseQuery(msg);
    if (!query) return;
    void resolve(query.question).then(({ rcode, address: ip }) => {
      if (ip) counts.a += 1;
      else if (rcode === RCODE.nxdomain) counts.nxdomain += 1;
      else if (rcode === RCODE.refused) counts.refused += 1;
      socket.send(answer(query.id, query.question, rcode, ip), peer.port, peer.address);
    });
  });
  await new Promise<void>((resolvePromise, reject) => {
    socket.once('error', reject);
    socket.bind(53, address, () => resolvePromise());
  });
  return {
    address,
    counts,
    close: () => new Promise((done) => socket.close(() => done())),
  };
}
