import type { Claim } from '@cubicle/contract/api';
import { ActionForm } from '../../components/action-form';
import { extendClaim, releaseClaim } from './actions';

/** ClaimControls: extend the TTL, release. Shared by the claims list and the claim page. */
export function ClaimControls({ claim }: { claim: Claim }) {
  if (claim.status === 'released') return <span className="muted">released</span>;
  return (
    <div className="row">
      <ActionForm action={extendClaim} submit="Extend" pending="Extending…">
        <input type="hidden" name="claim" value={claim.id} />
        <input
          type="number"
          name="ttl_seconds"
          min={1}
          defaultValue={claim.ttl_seconds}
          aria-label={`TTL seconds for ${claim.name}`}
        />
        <span className="muted">s</span>
      </ActionForm>
      <ActionForm
        action={releaseClaim}
        submit="Release"
        pending="Releasing…"
        buttonClass="danger"
        confirm="Release this desktop? It will be destroyed."
      >
        <input type="hidden" name="claim" value={claim.id} />
      </ActionForm>
    </div>
  );
}
