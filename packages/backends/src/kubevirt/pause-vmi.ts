import {
  Observable,
  ResponseContext,
  SelfDecodingBody,
  type RequestContext,
} from '@kubernetes/client-node';
import { AppError } from '@cubicle/contract/errors';
import { isConflict, isNotFound, type ApiOptions, type KubeClient } from '../kube/client.js';
import { sandboxObjectName } from '../kube/names.js';

/** KubeVirt's subresource API group: pause and unpause are PUTs on a VMI there, not patches. */
const SUBRESOURCES = { group: 'subresources.kubevirt.io', version: 'v1' };
const plural = 'virtualmachineinstances';

/** vmiSubresourcePath is the URL path of a VMI's `pause` or `unpause` subresource. */
export const vmiSubresourcePath = (namespace: string, name: string, action: VmiAction) =>
  `/apis/${SUBRESOURCES.group}/${SUBRESOURCES.version}/namespaces/${encodeURIComponent(namespace)}/${plural}/${encodeURIComponent(name)}/${action}`;

export type VmiAction = 'pause' | 'unpause';

/**
 * withSubresource makes a custom object call address `<name>/<action>`: the generated client
 * encodes the name's slash, so the request's URL gets it back before it is sent.
 */
function withSubresource(options: ApiOptions, name: string, action: VmiAction): ApiOptions {
  const encoded = `/${encodeURIComponent(`${name}/${action}`)}`;
  const rewrite = {
    pre: (ctx: RequestContext) => {
      const url = new URL(ctx.getUrl());
      if (url.pathname.endsWith(encoded))
        url.pathname = `${url.pathname.slice(0, -encoded.length)}/${encodeURIComponent(name)}/${action}`;
      ctx.setUrl(url.toString());
      return new Observable(Promise.resolve(ctx));
    },
    // virt-api accepts with an empty body, which the generated client would fail to parse as
    // JSON: a success without a body reads as `{}`.
    post: (rsp: ResponseContext) =>
      new Observable(
        (async () => {
          if (rsp.httpStatusCode >= 300) return rsp;
          const text = await rsp.body.text();
          const body = new SelfDecodingBody(Promise.resolve(Buffer.from(text.trim() || '{}')));
          return new ResponseContext(rsp.httpStatusCode, rsp.headers, body);
        })(),
      ),
  };
  return { ...options, middleware: [...(options.middleware ?? []), rewrite] };
}

/**
 * setVmiPaused pauses or unpauses sandbox `sandboxId`'s VMI through KubeVirt's subresource API
 * (`PUT …/virtualmachineinstances/<name>/pause` with `{}`; virt-handler then pauses the guest's
 * vCPUs through libvirt). KubeVirt answers 409 for a VMI already in the asked state; that is
 * success here (both are idempotent). Returns when the API server has accepted the request.
 */
export async function setVmiPaused(
  client: KubeClient,
  namespace: string,
  sandboxId: string,
  paused: boolean,
): Promise<void> {
  const name = sandboxObjectName(sandboxId);
  const action: VmiAction = paused ? 'pause' : 'unpause';
  const target = { ...SUBRESOURCES, namespace, plural, name: `${name}/${action}`, body: {} };
  try {
    await client.call(
      `${action} VMI ${namespace}/${name}`,
      (o) => client.custom.replaceNamespacedCustomObject(target, withSubresource(o, name, action)),
      { attempts: 2 },
    );
  } catch (err) {
    // "VMI is already paused" / "VMI is not paused": the state asked for holds.
    if (isConflict(err) && /already paused|not paused/i.test((err as Error).message)) return;
    // No virt-api serving subresources.kubevirt.io (KubeVirt's CRDs without its controllers), or
    // the VMI is gone: either way this sandbox cannot be paused here.
    if (isNotFound(err))
      throw new AppError(
        'not_supported_by_backend',
        `KubeVirt's ${action} subresource answered 404 (virt-api not serving it, or the VMI is gone)`,
        { backend: 'kubevirt' },
      );
    throw err;
  }
}
