package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

var (
	_ resource.ResourceWithConfigure      = (*poolResource)(nil)
	_ resource.ResourceWithImportState    = (*poolResource)(nil)
	_ resource.ResourceWithValidateConfig = (*poolResource)(nil)
)

func newPoolResource() resource.Resource { return &poolResource{pollInterval: 2 * time.Second} }

type poolResource struct {
	client       *client.Client
	pollInterval time.Duration
}

func (r *poolResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pool"
}

func (r *poolResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = poolResourceSchema()
}

func (r *poolResource) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*client.Client); ok {
		r.client = c
	}
}

// ValidateConfig checks the rules that join two fields (the contract's refinements), so they
// too fail at plan.
func (r *poolResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m poolResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(validatePoolSpec(ctx, m.poolSpecModel)...)
}

func validatePoolSpec(ctx context.Context, m poolSpecModel) diag.Diagnostics {
	var diags diag.Diagnostics
	if !m.Autoscaling.IsNull() && !m.Autoscaling.IsUnknown() {
		var a autoscalingModel
		diags.Append(m.Autoscaling.As(ctx, &a, basetypes.ObjectAsOptions{})...)
		if isKnown(a.Min, a.Initial, a.Max) &&
			!(a.Min.ValueInt64() <= a.Initial.ValueInt64() && a.Initial.ValueInt64() <= a.Max.ValueInt64()) {
			diags.AddAttributeError(path.Root("autoscaling").AtName("initial"), "Invalid autoscaling",
				fmt.Sprintf("autoscaling must satisfy min ≤ initial ≤ max, got min = %d, initial = %d, max = %d",
					a.Min.ValueInt64(), a.Initial.ValueInt64(), a.Max.ValueInt64()))
		}
	}
	ttl, lifetime := m.ClaimTTLSeconds, m.MaxClaimLifetimeSeconds
	if !ttl.IsUnknown() && !lifetime.IsUnknown() {
		t, l := int64(client.DefaultClaimTTLSeconds), int64(client.DefaultMaxClaimLifetimeSeconds)
		if !ttl.IsNull() {
			t = ttl.ValueInt64()
		}
		if !lifetime.IsNull() {
			l = lifetime.ValueInt64()
		}
		if t > l {
			diags.AddAttributeError(path.Root("claim_ttl_seconds"), "Invalid claim TTL",
				fmt.Sprintf("claim_ttl_seconds (%d) must not exceed max_claim_lifetime_seconds (%d)", t, l))
		}
	}
	diags.Append(validatePrime(ctx, m.Prime)...)
	if !m.Kubernetes.IsNull() && !m.Kubernetes.IsUnknown() {
		var k kubernetesModel
		diags.Append(m.Kubernetes.As(ctx, &k, basetypes.ObjectAsOptions{})...)
		// The API stores an empty placement as none (null): an empty block would never match.
		if k.RuntimeClassName.IsNull() && k.NodeSelector.IsNull() && k.Tolerations.IsNull() {
			diags.AddAttributeError(path.Root("kubernetes"), "Empty kubernetes block",
				"Set at least one of runtime_class_name, node_selector or tolerations, or leave kubernetes out.")
		}
		if !k.Tolerations.IsNull() && !k.Tolerations.IsUnknown() {
			var ts []tolerationModel
			diags.Append(k.Tolerations.ElementsAs(ctx, &ts, false)...)
			for i, t := range ts {
				if t.Operator.ValueString() == "Exists" && !t.Value.IsNull() {
					diags.AddAttributeError(path.Root("kubernetes").AtName("tolerations").AtListIndex(i).AtName("value"),
						"Invalid toleration", "operator Exists takes no value")
				}
			}
		}
	}
	return diags
}

func isKnown(vs ...types.Int64) bool {
	for _, v := range vs {
		if v.IsNull() || v.IsUnknown() {
			return false
		}
	}
	return true
}

func (r *poolResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !resourceNameRE.MatchString(req.ID) {
		resp.Diagnostics.AddError("Invalid import id",
			fmt.Sprintf("Import a pool by its name (lowercase letters, digits and inner dashes), e.g. `tofu import cubicle_pool.web web`; got %q.", req.ID))
		return
	}
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}

// apply PUTs the plan and returns the state to save.
func (r *poolResource) apply(ctx context.Context, plan poolResourceModel, diags *diag.Diagnostics, action string) *poolResourceModel {
	spec, d := specFromModel(ctx, plan.poolSpecModel)
	diags.Append(d...)
	if diags.HasError() {
		return nil
	}
	pool, err := r.client.ApplyPool(ctx, plan.Name.ValueString(), spec)
	if err != nil {
		addAPIError(diags, r.client, fmt.Sprintf("%s pool %q (PUT /v1/pools/%s)", action, plan.Name.ValueString(), plan.Name.ValueString()), err)
		return nil
	}
	return r.stateFrom(ctx, pool, plan.DrainTimeout, diags)
}

func (r *poolResource) stateFrom(ctx context.Context, pool *client.Pool, drainTimeout types.String, diags *diag.Diagnostics) *poolResourceModel {
	spec, d := specModelFromPool(ctx, pool)
	diags.Append(d...)
	status, d := statusModelFromPool(pool)
	diags.Append(d...)
	if drainTimeout.IsNull() || drainTimeout.IsUnknown() {
		drainTimeout = types.StringValue(defaultDrainTimeout) // after an import
	}
	return &poolResourceModel{poolSpecModel: spec, poolStatusModel: status, DrainTimeout: drainTimeout}
}

func (r *poolResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan poolResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := plan.Name.ValueString()
	// PUT would silently take over a pool that exists already; make that an explicit import.
	if existing, err := r.client.GetPool(ctx, name); err == nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Pool already exists",
			fmt.Sprintf("The tenant already has a pool named %q (%s). Import it to manage it with Terraform: `tofu import <address> %s`.", name, existing.ID, name))
		return
	} else if !client.IsNotFound(err) {
		addAPIError(&resp.Diagnostics, r.client, fmt.Sprintf("check whether pool %q exists", name), err)
		return
	}
	if state := r.apply(ctx, plan, &resp.Diagnostics, "create"); state != nil {
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	}
}

func (r *poolResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state poolResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	pool, err := r.client.GetPool(ctx, state.Name.ValueString())
	if client.IsNotFound(err) && !state.ID.IsNull() {
		// Deleted outside Terraform: the next plan creates it again.
		tflog.Warn(ctx, "pool no longer exists; removing it from the state", map[string]any{"name": state.Name.ValueString()})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, r.client, fmt.Sprintf("read pool %q (GET /v1/pools/%s)", state.Name.ValueString(), state.Name.ValueString()), err)
		return
	}
	if next := r.stateFrom(ctx, pool, state.DrainTimeout, &resp.Diagnostics); next != nil {
		resp.Diagnostics.Append(resp.State.Set(ctx, next)...)
	}
}

func (r *poolResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan poolResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if state := r.apply(ctx, plan, &resp.Diagnostics, "update"); state != nil {
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	}
}

// Delete starts the drain (DELETE /v1/pools/{name}) and then waits, up to drain_timeout, until
// no claim of this pool (by id: the name is free again at once) is pending or active.
func (r *poolResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state poolResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.Name.ValueString()
	drained, err := r.client.DeletePool(ctx, name)
	if client.IsNotFound(err) {
		return // already gone
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, r.client, fmt.Sprintf("delete pool %q (DELETE /v1/pools/%s)", name, name), err)
		return
	}
	timeout, _ := time.ParseDuration(state.DrainTimeout.ValueString())
	if state.DrainTimeout.IsNull() {
		timeout, _ = time.ParseDuration(defaultDrainTimeout)
	}
	tflog.Info(ctx, "pool is draining: new claims are refused, warm sandboxes are destroyed, live claims run to their end",
		map[string]any{"pool": name, "id": drained.ID, "claimed": drained.Counts.Claimed, "warm": drained.Counts.Warm, "drain_timeout": timeout.String()})
	resp.Diagnostics.Append(r.waitForDrain(ctx, name, drained.ID, timeout)...)
}

// liveClaims lists the pending and active claims of the pool with this id.
func (r *poolResource) liveClaims(ctx context.Context, name, id string) ([]client.Claim, error) {
	var live []client.Claim
	for _, status := range []string{"active", "pending"} {
		claims, err := r.client.ListClaims(ctx, name, status)
		if err != nil {
			return nil, err
		}
		for _, c := range claims {
			if c.PoolID == id {
				live = append(live, c)
			}
		}
	}
	return live, nil
}

func describeClaims(claims []client.Claim) string {
	parts := make([]string, 0, len(claims))
	for i, c := range claims {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(claims)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s, expires %s)", c.ID, c.Name, c.Status, c.ExpiresAt))
	}
	return strings.Join(parts, ", ")
}

func (r *poolResource) waitForDrain(ctx context.Context, name, id string, timeout time.Duration) diag.Diagnostics {
	var diags diag.Diagnostics
	deadline := time.Now().Add(timeout)
	for {
		live, err := r.liveClaims(ctx, name, id)
		if err != nil {
			addAPIError(&diags, r.client, fmt.Sprintf("list the live claims of draining pool %q (GET /v1/claims)", name), err)
			return diags
		}
		if len(live) == 0 {
			tflog.Info(ctx, "pool drained: no live claims left", map[string]any{"pool": name, "id": id})
			return diags
		}
		if time.Now().After(deadline) {
			diags.AddError("Pool did not drain within drain_timeout",
				fmt.Sprintf("Pool %q (%s) is draining: it accepts no new claims and its name is free, but after %s %d claim(s) still hold its sandboxes: %s.\n\n"+
					"They end when released (DELETE /v1/claims/{id}), at their TTL or at the pool's maximum lifetime. Raise drain_timeout to wait longer, or release them and run destroy again.",
					name, id, timeout, len(live), describeClaims(live)))
			return diags
		}
		tflog.Info(ctx, fmt.Sprintf("waiting for %d live claim(s) of pool %s to end: %s", len(live), name, describeClaims(live)),
			map[string]any{"pool": name, "remaining": time.Until(deadline).Round(time.Second).String()})
		select {
		case <-ctx.Done():
			diags.AddError("Interrupted while waiting for the pool to drain", ctx.Err().Error())
			return diags
		case <-time.After(r.pollInterval):
		}
	}
}
