package provider

import (
	"context"
	"regexp"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// The pool's `egress` (EgressPolicy): where its sandboxes may connect.

type egressModel struct {
	Mode  types.String `tfsdk:"mode"`
	Allow types.List   `tfsdk:"allow"`
	Deny  types.List   `tfsdk:"deny"`
}

var (
	egressAttrTypes = map[string]attr.Type{
		"mode":  types.StringType,
		"allow": types.ListType{ElemType: types.StringType},
		"deny":  types.ListType{ElemType: types.StringType},
	}
	// A port range is the ports between its ends, in either order (as the API reads it).
	egressRuleRE = regexp.MustCompile(client.EgressRulePattern)
)

func egressRulesAttribute(description string) schema.ListAttribute {
	return schema.ListAttribute{
		Optional: true, Computed: true,
		ElementType: types.StringType,
		Default:     listdefault.StaticValue(types.ListValueMust(types.StringType, []attr.Value{})),
		Description: description,
		Validators: []validator.List{
			listvalidator.SizeAtMost(client.EgressRulesMax),
			listvalidator.ValueStringsAre(
				stringvalidator.LengthAtMost(client.EgressRuleMaxLength),
				stringvalidator.RegexMatches(egressRuleRE,
					"must be an egress rule: a name, *.name, an IP address or CIDR ([IPv6] when ports follow), optionally :port or :low-high"),
			),
		},
	}
}

// egressResourceAttribute is `egress` on cubicle_pool.
func egressResourceAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		Description: "Where the pool's sandboxes may connect. Unset: the installation default (`none` unless the " +
			"operator changed it). Whatever the mode, the control plane, node and loopback addresses and private, " +
			"link-local and metadata ranges stay closed unless the operator opens a range. A claim may narrow this " +
			"policy, never widen it. A change reaches running sandboxes within a second and never rolls warm ones.",
		Attributes: map[string]schema.Attribute{
			"mode": schema.StringAttribute{
				Required:    true,
				Description: "`none` (nothing), `allowlist` (exactly the `allow` rules) or `open` (the internet).",
				Validators:  []validator.String{stringvalidator.OneOf(client.EgressModes...)},
			},
			"allow": egressRulesAttribute("Rules reachable in `allowlist` mode: `api.example.com`, `*.example.com` " +
				"(names below it), `203.0.113.0/24`, `[2001:db8::/32]:443`, each optionally `:port` or `:low-high`. At most 256."),
			"deny": egressRulesAttribute("Rules refused in every mode, before `allow`. At most 256."),
		},
	}
}

// egressDataAttribute is `egress` as the data sources show it.
func egressDataAttribute() dschema.SingleNestedAttribute {
	rules := func(d string) dschema.ListAttribute {
		return dschema.ListAttribute{Computed: true, ElementType: types.StringType, Description: d}
	}
	return dschema.SingleNestedAttribute{Computed: true,
		Description: "Where the pool's sandboxes may connect; null when it follows the installation default.",
		Attributes: map[string]dschema.Attribute{
			"mode":  dschema.StringAttribute{Computed: true, Description: "`none`, `allowlist` or `open`."},
			"allow": rules("Rules reachable in `allowlist` mode."),
			"deny":  rules("Rules refused in every mode."),
		}}
}

// egressFromModel builds the API's egress from the plan; nil when `egress` is unset.
func egressFromModel(ctx context.Context, o types.Object) (*client.EgressPolicy, diag.Diagnostics) {
	var diags diag.Diagnostics
	if o.IsNull() || o.IsUnknown() {
		return nil, diags
	}
	var m egressModel
	diags.Append(o.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	out := &client.EgressPolicy{Mode: m.Mode.ValueString(), Allow: []string{}, Deny: []string{}}
	for _, list := range []struct {
		from types.List
		to   *[]string
	}{{m.Allow, &out.Allow}, {m.Deny, &out.Deny}} {
		if !list.from.IsNull() && !list.from.IsUnknown() {
			diags.Append(list.from.ElementsAs(ctx, list.to, false)...)
		}
	}
	return out, diags
}

// egressModelFromPool is the API's egress as state: null when the pool follows the default.
func egressModelFromPool(p *client.EgressPolicy) (types.Object, diag.Diagnostics) {
	var diags diag.Diagnostics
	if p == nil {
		return types.ObjectNull(egressAttrTypes), diags
	}
	list := func(rules []string) types.List {
		values := make([]attr.Value, 0, len(rules))
		for _, r := range rules {
			values = append(values, types.StringValue(r))
		}
		l, d := types.ListValue(types.StringType, values)
		diags.Append(d...)
		return l
	}
	o, d := types.ObjectValue(egressAttrTypes, map[string]attr.Value{
		"mode": types.StringValue(p.Mode), "allow": list(p.Allow), "deny": list(p.Deny),
	})
	diags.Append(d...)
	return o, diags
}
