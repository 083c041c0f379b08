package provider

import (
	"context"
	"math"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// poolSpecModel holds the attributes of a pool that the configuration sets (PoolSpec), shared by
// the resource and both data sources.
type poolSpecModel struct {
	Name                    types.String  `tfsdk:"name"`
	Image                   types.String  `tfsdk:"image"`
	Backend                 types.String  `tfsdk:"backend"`
	CPU                     types.Float64 `tfsdk:"cpu"`
	MemoryMB                types.Int64   `tfsdk:"memory_mb"`
	Autoscaling             types.Object  `tfsdk:"autoscaling"`
	ClaimTTLSeconds         types.Int64   `tfsdk:"claim_ttl_seconds"`
	MaxClaimLifetimeSeconds types.Int64   `tfsdk:"max_claim_lifetime_seconds"`
	IdleTimeoutSeconds      types.Int64   `tfsdk:"idle_timeout_seconds"`
	IdlePauseSeconds        types.Int64   `tfsdk:"idle_pause_seconds"`
	Env                     types.Map     `tfsdk:"env"`
	Kubernetes              types.Object  `tfsdk:"kubernetes"`
	Prime                   types.Object  `tfsdk:"prime"`
	Egress                  types.Object  `tfsdk:"egress"`
	Recording               types.Object  `tfsdk:"recording"`
	ProfilePaths            types.List    `tfsdk:"profile_paths"`
}

// poolStatusModel holds what the API computes: identity, state and the live counts.
type poolStatusModel struct {
	ID         types.String `tfsdk:"id"`
	State      types.String `tfsdk:"state"`
	Generation types.Int64  `tfsdk:"generation"`
	Counts     types.Object `tfsdk:"counts"`
	CreatedAt  types.String `tfsdk:"created_at"`
	UpdatedAt  types.String `tfsdk:"updated_at"`
}

// poolResourceModel is cubicle_pool's state.
type poolResourceModel struct {
	poolSpecModel
	poolStatusModel
	DrainTimeout types.String `tfsdk:"drain_timeout"`
}

// poolDataModel is one pool as the data sources show it.
type poolDataModel struct {
	poolSpecModel
	poolStatusModel
}

type autoscalingModel struct {
	Min     types.Int64 `tfsdk:"min"`
	Initial types.Int64 `tfsdk:"initial"`
	Max     types.Int64 `tfsdk:"max"`
}

type kubernetesModel struct {
	RuntimeClassName types.String `tfsdk:"runtime_class_name"`
	NodeSelector     types.Map    `tfsdk:"node_selector"`
	Tolerations      types.List   `tfsdk:"tolerations"`
}

type tolerationModel struct {
	Key               types.String `tfsdk:"key"`
	Operator          types.String `tfsdk:"operator"`
	Value             types.String `tfsdk:"value"`
	Effect            types.String `tfsdk:"effect"`
	TolerationSeconds types.Int64  `tfsdk:"toleration_seconds"`
}

var (
	autoscalingAttrTypes = map[string]attr.Type{
		"min": types.Int64Type, "initial": types.Int64Type, "max": types.Int64Type,
	}
	tolerationAttrTypes = map[string]attr.Type{
		"key": types.StringType, "operator": types.StringType, "value": types.StringType,
		"effect": types.StringType, "toleration_seconds": types.Int64Type,
	}
	kubernetesAttrTypes = map[string]attr.Type{
		"runtime_class_name": types.StringType,
		"node_selector":      types.MapType{ElemType: types.StringType},
		"tolerations":        types.ListType{ElemType: types.ObjectType{AttrTypes: tolerationAttrTypes}},
	}
	countsAttrTypes = map[string]attr.Type{
		"provisioning": types.Int64Type, "warm": types.Int64Type, "claimed": types.Int64Type,
		"releasing": types.Int64Type, "failed": types.Int64Type,
	}
)

// specFromModel builds the PUT body from a plan. Every field is sent: the plan already holds the
// API's defaults (schema defaults), so the API stores exactly what the plan shows.
func specFromModel(ctx context.Context, m poolSpecModel) (client.PoolSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	spec := client.PoolSpec{
		Image:                   m.Image.ValueString(),
		Backend:                 m.Backend.ValueString(),
		CPU:                     m.CPU.ValueFloat64(),
		MemoryMB:                m.MemoryMB.ValueInt64(),
		ClaimTTLSeconds:         m.ClaimTTLSeconds.ValueInt64(),
		MaxClaimLifetimeSeconds: m.MaxClaimLifetimeSeconds.ValueInt64(),
		IdleTimeoutSeconds:      m.IdleTimeoutSeconds.ValueInt64Pointer(),
		IdlePauseSeconds:        m.IdlePauseSeconds.ValueInt64Pointer(),
		Env:                     map[string]string{},
	}
	var a autoscalingModel
	diags.Append(m.Autoscaling.As(ctx, &a, basetypes.ObjectAsOptions{})...)
	spec.Autoscaling = client.Autoscaling{Min: a.Min.ValueInt64(), Initial: a.Initial.ValueInt64(), Max: a.Max.ValueInt64()}
	if !m.Env.IsNull() && !m.Env.IsUnknown() {
		diags.Append(m.Env.ElementsAs(ctx, &spec.Env, false)...)
	}
	if !m.Kubernetes.IsNull() && !m.Kubernetes.IsUnknown() {
		var k kubernetesModel
		diags.Append(m.Kubernetes.As(ctx, &k, basetypes.ObjectAsOptions{})...)
		out := &client.PoolKubernetes{RuntimeClassName: k.RuntimeClassName.ValueStringPointer()}
		if !k.NodeSelector.IsNull() && !k.NodeSelector.IsUnknown() {
			out.NodeSelector = map[string]string{}
			diags.Append(k.NodeSelector.ElementsAs(ctx, &out.NodeSelector, false)...)
		}
		if !k.Tolerations.IsNull() && !k.Tolerations.IsUnknown() {
			var ts []tolerationModel
			diags.Append(k.Tolerations.ElementsAs(ctx, &ts, false)...)
			out.Tolerations = []client.PoolToleration{}
			for _, t := range ts {
				op := t.Operator.ValueString()
				if op == "" {
					op = client.DefaultTolerationOperator
				}
				out.Tolerations = append(out.Tolerations, client.PoolToleration{
					Key: t.Key.ValueStringPointer(), Operator: op, Value: t.Value.ValueStringPointer(),
					Effect: t.Effect.ValueStringPointer(), TolerationSeconds: t.TolerationSeconds.ValueInt64Pointer(),
				})
			}
		}
		spec.Kubernetes = out
	}
	prime, d := primeFromModel(ctx, m.Prime)
	diags.Append(d...)
	spec.Prime = prime
	egress, d := egressFromModel(ctx, m.Egress)
	diags.Append(d...)
	spec.Egress = egress
	recording, d := recordingFromModel(ctx, m.Recording)
	diags.Append(d...)
	spec.Recording = recording
	spec.ProfilePaths, d = profilePathsFromModel(ctx, m.ProfilePaths)
	diags.Append(d...)
	return spec, diags
}

// specModelFromPool fills the configurable attributes from the API's answer, so a change made
// outside Terraform shows as a difference in the next plan.
func specModelFromPool(ctx context.Context, p *client.Pool) (poolSpecModel, diag.Diagnostics) {
	var diags, d diag.Diagnostics
	m := poolSpecModel{
		Name:                    types.StringValue(p.Name),
		Image:                   types.StringValue(p.Image),
		Backend:                 types.StringValue(p.Backend),
		CPU:                     types.Float64Value(roundCPU(p.CPU)),
		MemoryMB:                types.Int64Value(p.MemoryMB),
		ClaimTTLSeconds:         types.Int64Value(p.ClaimTTLSeconds),
		MaxClaimLifetimeSeconds: types.Int64Value(p.MaxClaimLifetimeSeconds),
		IdleTimeoutSeconds:      types.Int64PointerValue(p.IdleTimeoutSeconds),
		IdlePauseSeconds:        types.Int64PointerValue(p.IdlePauseSeconds),
	}
	m.Autoscaling, d = types.ObjectValue(autoscalingAttrTypes, map[string]attr.Value{
		"min":     types.Int64Value(p.Autoscaling.Min),
		"initial": types.Int64Value(p.Autoscaling.Initial),
		"max":     types.Int64Value(p.Autoscaling.Max),
	})
	diags.Append(d...)
	env := p.Env
	if env == nil {
		env = map[string]string{}
	}
	m.Env, d = types.MapValueFrom(ctx, types.StringType, env)
	diags.Append(d...)
	m.Kubernetes = types.ObjectNull(kubernetesAttrTypes)
	if p.Kubernetes != nil {
		k := p.Kubernetes
		nodeSelector := types.MapNull(types.StringType)
		if k.NodeSelector != nil {
			nodeSelector, d = types.MapValueFrom(ctx, types.StringType, k.NodeSelector)
			diags.Append(d...)
		}
		tolerations := types.ListNull(types.ObjectType{AttrTypes: tolerationAttrTypes})
		if k.Tolerations != nil {
			ts := make([]tolerationModel, 0, len(k.Tolerations))
			for _, t := range k.Tolerations {
				ts = append(ts, tolerationModel{
					Key: types.StringPointerValue(t.Key), Operator: types.StringValue(t.Operator),
					Value: types.StringPointerValue(t.Value), Effect: types.StringPointerValue(t.Effect),
					TolerationSeconds: types.Int64PointerValue(t.TolerationSeconds),
				})
			}
			tolerations, d = types.ListValueFrom(ctx, types.ObjectType{AttrTypes: tolerationAttrTypes}, ts)
			diags.Append(d...)
		}
		m.Kubernetes, d = types.ObjectValue(kubernetesAttrTypes, map[string]attr.Value{
			"runtime_class_name": types.StringPointerValue(k.RuntimeClassName),
			"node_selector":      nodeSelector,
			"tolerations":        tolerations,
		})
		diags.Append(d...)
	}
	m.Prime, d = primeModelFromPool(ctx, p.Prime)
	diags.Append(d...)
	m.Egress, d = egressModelFromPool(p.Egress)
	diags.Append(d...)
	m.Recording, d = recordingModelFromPool(p.Recording)
	diags.Append(d...)
	m.ProfilePaths, d = profilePathsModelFromPool(ctx, p.ProfilePaths)
	diags.Append(d...)
	return m, diags
}

// statusModelFromPool fills the computed attributes: identity, state, generation and live counts.
func statusModelFromPool(p *client.Pool) (poolStatusModel, diag.Diagnostics) {
	counts, diags := types.ObjectValue(countsAttrTypes, map[string]attr.Value{
		"provisioning": types.Int64Value(p.Counts.Provisioning),
		"warm":         types.Int64Value(p.Counts.Warm),
		"claimed":      types.Int64Value(p.Counts.Claimed),
		"releasing":    types.Int64Value(p.Counts.Releasing),
		"failed":       types.Int64Value(p.Counts.Failed),
	})
	return poolStatusModel{
		ID:         types.StringValue(p.ID),
		State:      types.StringValue(p.State),
		Generation: types.Int64Value(p.Generation),
		Counts:     counts,
		CreatedAt:  types.StringValue(p.CreatedAt),
		UpdatedAt:  types.StringValue(p.UpdatedAt),
	}, diags
}

// roundCPU keeps the API's millicore value free of binary noise (0.5 stays 0.5, not 0.49999…).
func roundCPU(cpu float64) float64 { return math.Round(cpu*1000) / 1000 }
