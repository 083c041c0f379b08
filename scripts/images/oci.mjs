// OCI image layouts written by hand (the image-spec's files are small JSON documents): each layer
// is a reproducible uncompressed tar of a directory (GNU tar: sorted names, numeric owners, mtimes
// clamped to SOURCE_DATE_EPOCH, no atime/ctime), stored by its sha256 in one shared blob store;
// an image is a config + manifest over those blobs. containerd imports the layout as a tar stream
// (`ctr images import -`). Uncompressed layers: these images never leave the machine, and gzip of
// 700 MB would cost ~30 s of a loaded core for nothing.
import { createHash } from 'node:crypto';
import {
  createReadStream,
  existsSync,
  linkSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { runLogged } from './rootfs.mjs';

export const MEDIA = Object.freeze({
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar',
});

/** sha256File streams a file through sha256 (hex). */
export function sha256File(file) {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .once('error', reject)
      .once('end', () => resolve(hash.digest('hex')));
  });
}

function blobPath(store, digestHex) {
  return join(store, 'blobs', 'sha256', digestHex);
}

/** putBlob stores bytes (a JSON document) by digest and returns its descriptor. */
export function putBlob(store, mediaType, bytes) {
  const hex = createHash('sha256').update(bytes).digest('hex');
  mkdirSync(join(store, 'blobs', 'sha256'), { recursive: true });
  const path = blobPath(store, hex);
  if (!existsSync(path)) writeFileSync(path, bytes);
  return { mediaType, digest: `sha256:${hex}`, size: bytes.length };
}

/**
 * tarLayer packs `dir` into a layer blob of `store` and returns its descriptor. `owner0` forces
 * root ownership (the repository's files belong to whoever checked them out).
 */
export async function tarLayer(store, dir, { epoch, owner0 = false, logFile, label, log }) {
  mkdirSync(join(store, 'blobs', 'sha256'), { recursive: true });
  const partial = join(store, `layer-${process.pid}-${Date.now()}.tar.partial`);
  await runLogged(
    'tar',
    [
      '--create',
      `--file=${partial}`,
      `--directory=${dir}`,
      '--sort=name',
      '--numeric-owner',
      ...(owner0 ? ['--owner=0', '--group=0'] : []),
      `--mtime=@${epoch}`,
      '--clamp-mtime',
      '--format=posix',
      '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
      '--xattrs',
      '.',
    ],
    { logFile, label, log },
  );
  const hex = await sha256File(partial);
  const size = statSync(partial).size;
  const path = blobPath(store, hex);
  if (existsSync(path)) rmSync(partial);
  else renameSync(partial, path);
  return { mediaType: MEDIA.layer, digest: `sha256:${hex}`, size };
}

/**
 * writeImage writes config + manifest for `layers` (descriptors of uncompressed tars, so each
 * diff_id is its digest) and a layout directory `out` (oci-layout, index.json naming the image
 * `ref`, blobs hard-linked from the store). Returns the manifest descriptor.
 */
export function writeImage(store, out, { ref, layers, config, epoch, history }) {
  const created = new Date(epoch * 1000).toISOString();
  const configDoc = {
    created,
    architecture: 'amd64',
    os: 'linux',
    config,
    rootfs: { type: 'layers', diff_ids: layers.map((l) => l.digest) },
    history: history.map((created_by) => ({ created, created_by })),
  };
  const configDesc = putBlob(store, MEDIA.config, Buffer.from(JSON.stringify(configDoc)));
  const manifest = {
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config: configDesc,
    layers,
  };
  const manifestDesc = putBlob(store, MEDIA.manifest, Buffer.from(JSON.stringify(manifest)));
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'blobs', 'sha256'), { recursive: true });
  for (const desc of [configDesc, manifestDesc, ...layers]) {
    const hex = desc.digest.slice('sha256:'.length);
    linkSync(blobPath(store, hex), join(out, 'blobs', 'sha256', hex));
  }
  writeFileSync(join(out, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  const index = {
    schemaVersion: 2,
    mediaType: MEDIA.index,
    manifests: [
      {
        ...manifestDesc,
        platform: { architecture: 'amd64', os: 'linux' },
        annotations: {
          // containerd's ctr names the imported image after this one…
          'io.containerd.image.name': ref,
          // …and other OCI tools after the tag.
          'org.opencontainers.image.ref.name': ref.split(':').at(-1),
        },
      },
    ],
  };
  writeFileSync(join(out, 'index.json'), JSON.stringify(index));
  return manifestDesc;
}
