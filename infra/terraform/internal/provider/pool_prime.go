package provider

import (
	"context"
	"strings"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// The pool's `prime` (PoolPrime): apps every warm desktop has open before a claim takes it.

type primeModel struct {
	Apps           types.List  `tfsdk:"apps"`
	TimeoutSeconds types.Int64 `tfsdk:"timeout_seconds"`
}

type primeAppModel struct {
	App     types.String `tfsdk:"app"`
	URL     types.String `tfsdk:"url"`
	WaitFor types.Object `tfsdk:"wait_for"`
}

type primeWaitModel struct {
	Kind     types.String `tfsdk:"kind"`
	Contains types.String `tfsdk:"contains"`
	Name     types.String `tfsdk:"name"`
	Role     types.String `tfsdk:"role"`
	MS       types.Int64  `tfsdk:"ms"`
}

var (
	primeWaitAttrTypes = map[string]attr.Type{
		"kind": types.StringType, "contains": types.StringType, "name": types.StringType,
		"role": types.StringType, "ms": types.Int64Type,
	}
	primeAppAttrTypes = map[string]attr.Type{
		"app": types.StringType, "url": types.StringType,
		"wait_for": types.ObjectType{AttrTypes: primeWaitAttrTypes},
	}
	primeAttrTypes = map[string]attr.Type{
		"apps":            types.ListType{ElemType: types.ObjectType{AttrTypes: primeAppAttrTypes}},
		"timeout_seconds": types.Int64Type,
	}
)

// primeResourceAttribute is `prime` on cubicle_pool. What the contract checks across fields
// (url only for a browser, each app once, a wait's field for its kind) is checked at plan time
// by validatePrime.
func primeResourceAttribute() schema.SingleNestedAttribute {
	waitText := []validator.String{stringvalidator.LengthBetween(1, client.PrimeWaitTextMaxLength)}
	return schema.SingleNestedAttribute{
		Optional: true,
		Description: "Apps every warm desktop has open before a claim takes it: a desktop counts as warm only " +
			"once they are open (and their `wait_for` held) within `timeout_seconds`, otherwise it fails with the " +
			"reason and is replaced; a primed app that exits while the desktop waits gets the desktop replaced. " +
			"Claims list the windows as `primed_windows`. A change rolls warm sandboxes. Unset: nothing is primed. " +
			"(The API reserves `restore`, a profile or snapshot to restore first, for a later release.)",
		Attributes: map[string]schema.Attribute{
			"apps": schema.ListNestedAttribute{
				Required:    true,
				Description: "The apps, launched in order (1–8, each app at most once).",
				Validators:  []validator.List{listvalidator.SizeBetween(1, client.PrimeAppsMax)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"app": schema.StringAttribute{
						Required:    true,
						Description: "`browser` (Chromium), `browser.firefox`, `office.writer`, `office.calc`, `terminal`, `files` or `editor`.",
						Validators:  []validator.String{stringvalidator.OneOf(client.PrimeApps...)},
					},
					"url": schema.StringAttribute{
						Optional:    true,
						Description: "The page a browser app opens (`http`, `https` or `file` URL).",
						Validators:  []validator.String{stringvalidator.LengthBetween(1, client.PrimeURLMaxLength)},
					},
					"wait_for": schema.SingleNestedAttribute{
						Optional: true,
						Description: "When the app counts as ready, after its window appeared: `kind = \"window_title\"` with " +
							"`contains`, `kind = \"element\"` with `name` (and `role`), or `kind = \"delay\"` with `ms`.",
						Attributes: map[string]schema.Attribute{
							"kind": schema.StringAttribute{Required: true, Description: "`window_title`, `element` or `delay`.",
								Validators: []validator.String{stringvalidator.OneOf(client.PrimeWaitKinds...)}},
							"contains": schema.StringAttribute{Optional: true, Description: "With `window_title`: text the title contains.", Validators: waitText},
							"name":     schema.StringAttribute{Optional: true, Description: "With `element`: the element's accessible name.", Validators: waitText},
							"role":     schema.StringAttribute{Optional: true, Description: "With `element`: its role, e.g. `push_button`."},
							"ms": schema.Int64Attribute{Optional: true, Description: "With `delay`: milliseconds to wait (1–60000).",
								Validators: []validator.Int64{int64validator.Between(1, client.PrimeDelayMSMax)}},
						},
					},
				}},
			},
			"timeout_seconds": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:     int64default.StaticInt64(client.DefaultPrimeTimeoutSeconds),
				Description: "The whole priming's bound in seconds, every app and wait included (1–240). Default 60.",
				Validators:  []validator.Int64{int64validator.Between(1, client.PrimeTimeoutSecondsMax)},
			},
		},
	}
}

// primeDataAttribute is `prime` as the data sources show it.
func primeDataAttribute() dschema.SingleNestedAttribute {
	str := func(d string) dschema.StringAttribute { return dschema.StringAttribute{Computed: true, Description: d} }
	return dschema.SingleNestedAttribute{Computed: true, Description: "Apps every warm desktop has open; null when none.",
		Attributes: map[string]dschema.Attribute{
			"apps": dschema.ListNestedAttribute{Computed: true, Description: "The apps, in launch order.",
				NestedObject: dschema.NestedAttributeObject{Attributes: map[string]dschema.Attribute{
					"app": str("The app's launch name."), "url": str("The page a browser app opens."),
					"wait_for": dschema.SingleNestedAttribute{Computed: true, Description: "When the app counts as ready.",
						Attributes: map[string]dschema.Attribute{
							"kind": str("`window_title`, `element` or `delay`."), "contains": str("Title text."),
							"name": str("Element name."), "role": str("Element role."),
							"ms": dschema.Int64Attribute{Computed: true, Description: "Delay in milliseconds."},
						}},
				}}},
			"timeout_seconds": dschema.Int64Attribute{Computed: true, Description: "The whole priming's bound in seconds."},
		}}
}

// primeFromModel builds the API's prime from the plan; nil when `prime` is unset.
func primeFromModel(ctx context.Context, o types.Object) (*client.PoolPrime, diag.Diagnostics) {
	var diags diag.Diagnostics
	if o.IsNull() || o.IsUnknown() {
		return nil, diags
	}
	var m primeModel
	diags.Append(o.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	var apps []primeAppModel
	if !m.Apps.IsUnknown() {
		diags.Append(m.Apps.ElementsAs(ctx, &apps, false)...)
	}
	out := &client.PoolPrime{Apps: []client.PrimeApp{}, TimeoutSeconds: m.TimeoutSeconds.ValueInt64()}
	if m.TimeoutSeconds.IsNull() || m.TimeoutSeconds.IsUnknown() {
		out.TimeoutSeconds = client.DefaultPrimeTimeoutSeconds
	}
	for _, a := range apps {
		app := client.PrimeApp{App: a.App.ValueString(), URL: a.URL.ValueStringPointer()}
		if !a.WaitFor.IsNull() && !a.WaitFor.IsUnknown() {
			var w primeWaitModel
			diags.Append(a.WaitFor.As(ctx, &w, basetypes.ObjectAsOptions{})...)
			app.WaitFor = &client.PrimeWait{
				Kind: w.Kind.ValueString(), Contains: w.Contains.ValueStringPointer(),
				Name: w.Name.ValueStringPointer(), Role: w.Role.ValueStringPointer(), MS: w.MS.ValueInt64Pointer(),
			}
		}
		out.Apps = append(out.Apps, app)
	}
	return out, diags
}

// primeModelFromPool is the API's prime as state: null when the pool primes nothing.
func primeModelFromPool(ctx context.Context, p *client.PoolPrime) (types.Object, diag.Diagnostics) {
	var diags, d diag.Diagnostics
	if p == nil {
		return types.ObjectNull(primeAttrTypes), diags
	}
	apps := make([]attr.Value, 0, len(p.Apps))
	for _, a := range p.Apps {
		wait := types.ObjectNull(primeWaitAttrTypes)
		if w := a.WaitFor; w != nil {
			wait, d = types.ObjectValue(primeWaitAttrTypes, map[string]attr.Value{
				"kind": types.StringValue(w.Kind), "contains": types.StringPointerValue(w.Contains),
				"name": types.StringPointerValue(w.Name), "role": types.StringPointerValue(w.Role),
				"ms": types.Int64PointerValue(w.MS),
			})
			diags.Append(d...)
		}
		app, d := types.ObjectValue(primeAppAttrTypes, map[string]attr.Value{
			"app": types.StringValue(a.App), "url": types.StringPointerValue(a.URL), "wait_for": wait,
		})
		diags.Append(d...)
		apps = append(apps, app)
	}
	list, d := types.ListValue(types.ObjectType{AttrTypes: primeAppAttrTypes}, apps)
	diags.Append(d...)
	o, d := types.ObjectValue(primeAttrTypes, map[string]attr.Value{
		"apps": list, "timeout_seconds": types.Int64Value(p.TimeoutSeconds),
	})
	diags.Append(d...)
	return o, diags
}

// validatePrime checks what the contract checks across a prime's fields, so a prime the API
// would refuse fails at plan: url only with a browser app, each app once, and each wait with
// the field of its kind (and no other).
func validatePrime(ctx context.Context, o types.Object) diag.Diagnostics {
	var diags diag.Diagnostics
	// Parts unknown until apply read as empty here; the API checks them again at apply.
	prime, d := primeFromModel(ctx, o)
	if prime == nil || d.HasError() {
		return diags
	}
	seen := map[string]bool{}
	for i, a := range prime.Apps {
		at := path.Root("prime").AtName("apps").AtListIndex(i)
		if a.App == "" {
			continue // unknown until apply
		}
		if seen[a.App] {
			diags.AddAttributeError(at.AtName("app"), "An app is primed at most once",
				"`"+a.App+"` appears twice: a second launch of a single-instance app opens no window of its own.")
		}
		seen[a.App] = true
		if a.URL != nil && !strings.HasPrefix(a.App, "browser") {
			diags.AddAttributeError(at.AtName("url"), "url is for a browser app",
				"`url` opens a page in a browser app (`browser` or `browser.firefox`), not in `"+a.App+"`.")
		}
		if w := a.WaitFor; w != nil {
			diags.Append(validatePrimeWait(at.AtName("wait_for"), w)...)
		}
	}
	return diags
}

// validatePrimeWait: each kind takes its own field (`contains`, `name` with `role`, `ms`) only.
func validatePrimeWait(at path.Path, w *client.PrimeWait) diag.Diagnostics {
	var diags diag.Diagnostics
	want := map[string]string{"window_title": "contains", "element": "name", "delay": "ms"}[w.Kind]
	if want == "" {
		return diags // unknown until apply, or refused by the kind's own validator
	}
	given := map[string]bool{"contains": w.Contains != nil, "name": w.Name != nil, "ms": w.MS != nil}
	for _, field := range []string{"contains", "name", "ms"} {
		if field == want && !given[field] {
			diags.AddAttributeError(at.AtName(field), "Missing wait_for field",
				"`kind = \""+w.Kind+"\"` needs `"+field+"`.")
		}
		if field != want && given[field] {
			diags.AddAttributeError(at.AtName(field), "wait_for field of another kind",
				"`kind = \""+w.Kind+"\"` takes `"+want+"`, not `"+field+"`.")
		}
	}
	if w.Role != nil && w.Kind != "element" {
		diags.AddAttributeError(at.AtName("role"), "wait_for field of another kind",
			"`role` goes with `kind = \"element\"`.")
	}
	return diags
}
