package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// The pool's `recording` (PoolRecording) and `profile_paths`: neither rolls desktops.

type recordingModel struct {
	Video   types.Bool   `tfsdk:"video"`
	FPS     types.Int64  `tfsdk:"fps"`
	Quality types.String `tfsdk:"quality"`
}

var (
	recordingAttrTypes = map[string]attr.Type{
		"video": types.BoolType, "fps": types.Int64Type, "quality": types.StringType,
	}
	recordingEstimateAttrTypes = map[string]attr.Type{
		"cpu_pct_one_core": types.Float64Type, "mb_per_min": types.Float64Type,
	}
	// The data sources show the API's estimate beside the settings. The resource does not: it is
	// derived from fps and quality, and a computed part would show as unknown in every plan that
	// changes the recording.
	recordingDataAttrTypes = map[string]attr.Type{
		"video": types.BoolType, "fps": types.Int64Type, "quality": types.StringType,
		"estimate": types.ObjectType{AttrTypes: recordingEstimateAttrTypes},
	}
)

// recordingResourceAttribute is `recording` on cubicle_pool.
func recordingResourceAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		Description: "Video recording of claims (H.264, uploaded in segments while the claim runs). Unset: the pool " +
			"offers none, and a claim asking for it is refused (409 `recording_not_allowed`). A change never rolls desktops.",
		Attributes: map[string]schema.Attribute{
			"video": schema.BoolAttribute{
				Required: true,
				Description: "`true` records every claim unless the claim turns it off; `false` records only claims " +
					"that ask (`recording = { video = true }` on the claim).",
			},
			"fps": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:     int64default.StaticInt64(client.DefaultRecordingFPS),
				Description: "Frames a second (1–15); a claim may ask for another. Default 5.",
				Validators:  []validator.Int64{int64validator.Between(client.RecordingFPSMin, client.RecordingFPSMax)},
			},
			"quality": schema.StringAttribute{
				Optional: true, Computed: true,
				Default: stringdefault.StaticString(client.DefaultRecordingQuality),
				Description: "`low`, `medium` or `high` (H.264 CRF 34 / 28 / 23): bytes against sharpness; text stays " +
					"readable at `medium`. Default `medium`.",
				Validators: []validator.String{stringvalidator.OneOf(client.RecordingQualities...)},
			},
		},
	}
}

// recordingDataAttribute is `recording` as the data sources show it, with its estimated cost.
func recordingDataAttribute() dschema.SingleNestedAttribute {
	f64 := func(d string) dschema.Float64Attribute {
		return dschema.Float64Attribute{Computed: true, Description: d}
	}
	return dschema.SingleNestedAttribute{Computed: true, Description: "Video recording of claims; null when the pool offers none.",
		Attributes: map[string]dschema.Attribute{
			"video":   dschema.BoolAttribute{Computed: true, Description: "Whether every claim is recorded (else only claims that ask)."},
			"fps":     dschema.Int64Attribute{Computed: true, Description: "Frames a second."},
			"quality": dschema.StringAttribute{Computed: true, Description: "`low`, `medium` or `high`."},
			"estimate": dschema.SingleNestedAttribute{Computed: true,
				Description: "What one recorded desktop costs at these settings, measured at 1280×800 with a busy screen.",
				Attributes: map[string]dschema.Attribute{
					"cpu_pct_one_core": f64("Percent of one CPU core the encoder uses."),
					"mb_per_min":       f64("Megabytes (10^6 bytes) stored per minute recorded."),
				}},
		}}
}

// recordingFromModel builds the API's recording from the plan; nil when `recording` is unset.
func recordingFromModel(ctx context.Context, o types.Object) (*client.PoolRecording, diag.Diagnostics) {
	var diags diag.Diagnostics
	if o.IsNull() || o.IsUnknown() {
		return nil, diags
	}
	var m recordingModel
	diags.Append(o.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	out := &client.PoolRecording{Video: m.Video.ValueBool(), FPS: m.FPS.ValueInt64(), Quality: m.Quality.ValueString()}
	if m.FPS.IsNull() || m.FPS.IsUnknown() {
		out.FPS = client.DefaultRecordingFPS
	}
	if m.Quality.IsNull() || m.Quality.IsUnknown() {
		out.Quality = client.DefaultRecordingQuality
	}
	return out, diags
}

// recordingModelFromPool is the API's recording as the resource's state: null when none.
func recordingModelFromPool(p *client.PoolRecordingView) (types.Object, diag.Diagnostics) {
	if p == nil {
		return types.ObjectNull(recordingAttrTypes), nil
	}
	return types.ObjectValue(recordingAttrTypes, map[string]attr.Value{
		"video": types.BoolValue(p.Video), "fps": types.Int64Value(p.FPS), "quality": types.StringValue(p.Quality),
	})
}

// recordingDataFromPool is the API's recording as the data sources show it, estimate included.
func recordingDataFromPool(p *client.PoolRecordingView) (types.Object, diag.Diagnostics) {
	if p == nil {
		return types.ObjectNull(recordingDataAttrTypes), nil
	}
	var diags diag.Diagnostics
	estimate, d := types.ObjectValue(recordingEstimateAttrTypes, map[string]attr.Value{
		"cpu_pct_one_core": types.Float64Value(p.Estimate.CPUPctOneCore),
		"mb_per_min":       types.Float64Value(p.Estimate.MBPerMin),
	})
	diags.Append(d...)
	o, d := types.ObjectValue(recordingDataAttrTypes, map[string]attr.Value{
		"video": types.BoolValue(p.Video), "fps": types.Int64Value(p.FPS), "quality": types.StringValue(p.Quality),
		"estimate": estimate,
	})
	diags.Append(d...)
	return o, diags
}

// profilePathsResourceAttribute is `profile_paths` on cubicle_pool. No default: unset is sent as
// null and read back as null, so the API's default set can change without a diff here.
func profilePathsResourceAttribute() schema.ListAttribute {
	return schema.ListAttribute{
		Optional: true, ElementType: types.StringType,
		Description: "Paths of the desktop user's home that claims with a `profile` keep, relative to the home " +
			"(`.config/chromium`, `Documents`; no leading `/`, no `.` or `..` component), 1–32 paths of at most 512 " +
			"characters. Unset: the default set (the Chromium and Firefox profiles, Documents, Desktop and the shell " +
			"history). A change never rolls desktops.",
		Validators: []validator.List{
			listvalidator.SizeBetween(client.ProfilePathsMin, client.ProfilePathsMax),
			listvalidator.ValueStringsAre(
				stringvalidator.LengthBetween(1, client.ProfilePathMaxLength),
				homeRelativePathValidator{},
			),
		},
	}
}

func profilePathsDataAttribute() dschema.ListAttribute {
	return dschema.ListAttribute{Computed: true, ElementType: types.StringType,
		Description: "Home paths its claims' profiles keep; null when the pool keeps the default set."}
}

func profilePathsFromModel(ctx context.Context, l types.List) ([]string, diag.Diagnostics) {
	var diags diag.Diagnostics
	if l.IsNull() || l.IsUnknown() {
		return nil, diags
	}
	out := []string{}
	diags.Append(l.ElementsAs(ctx, &out, false)...)
	return out, diags
}

func profilePathsModelFromPool(ctx context.Context, paths []string) (types.List, diag.Diagnostics) {
	if paths == nil {
		return types.ListNull(types.StringType), nil
	}
	return types.ListValueFrom(ctx, types.StringType, paths)
}

// homeRelativePathValidator is the contract's ProfilePath refinement (not expressible in the
// OpenAPI document): relative to the home, no empty, `.` or `..` component, no NUL.
type homeRelativePathValidator struct{}

func (homeRelativePathValidator) Description(context.Context) string {
	return "value must be a path relative to the home, without empty, \".\" or \"..\" components"
}
func (v homeRelativePathValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (homeRelativePathValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	p := req.ConfigValue.ValueString()
	ok := !strings.HasPrefix(p, "/") && !strings.Contains(p, "\x00")
	for _, part := range strings.Split(p, "/") {
		ok = ok && part != "" && part != "." && part != ".."
	}
	if !ok {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid profile path",
			fmt.Sprintf("%s must be a path relative to the home such as .config/chromium (no leading /, no empty, . or .. component), got %q", req.Path, p))
	}
}
