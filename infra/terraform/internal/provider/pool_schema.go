package provider

import (
	"regexp"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

const defaultDrainTimeout = "10m"

var (
	resourceNameRE = regexp.MustCompile(client.ResourceNamePattern)
	envNameRE      = regexp.MustCompile(client.EnvNamePattern)
	runtimeClassRE = regexp.MustCompile(client.RuntimeClassNamePattern)
	labelKeyRE     = regexp.MustCompile(client.LabelKeyPattern)
	labelValueRE   = regexp.MustCompile(client.LabelValuePattern)
)

func nameValidators() []validator.String {
	return []validator.String{
		stringvalidator.LengthBetween(1, client.ResourceNameMaxLength),
		stringvalidator.RegexMatches(resourceNameRE, "must be lowercase letters, digits and inner dashes (1–63 characters)"),
	}
}

func labelKeyValidators() []validator.String {
	return []validator.String{
		stringvalidator.LengthAtMost(client.LabelKeyMaxLength),
		stringvalidator.RegexMatches(labelKeyRE, "must be a Kubernetes label key ([prefix/]name)"),
	}
}

func labelValueValidator() validator.String {
	return stringvalidator.RegexMatches(labelValueRE, "must be a Kubernetes label value (≤ 63 characters, alphanumeric at both ends)")
}

func countsAttribute() schema.SingleNestedAttribute {
	count := func(what string) schema.Int64Attribute {
		return schema.Int64Attribute{Computed: true, Description: what}
	}
	return schema.SingleNestedAttribute{
		Computed: true,
		Description: "Live sandbox counts, read on every refresh. They change on their own as " +
			"sandboxes are claimed and refilled and never cause a diff.",
		Attributes: map[string]schema.Attribute{
			"provisioning": count("Sandboxes being started."),
			"warm":         count("Sandboxes ready to be claimed."),
			"claimed":      count("Sandboxes held by a live claim."),
			"releasing":    count("Sandboxes being destroyed after their claim ended."),
			"failed":       count("Sandboxes that failed to start."),
		},
	}
}

// poolResourceSchema mirrors PoolSpec: the API's defaults are schema defaults (so a plan shows
// them), and the contract's limits are validators (so a bad value fails at plan, not apply).
func poolResourceSchema() schema.Schema {
	keepID := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	return schema.Schema{
		Description: "A named warm pool of desktops, applied with `PUT /v1/pools/{name}`. Every " +
			"change but the name is applied in place: an image, resources, env, kubernetes or prime change " +
			"rolls warm sandboxes while claimed ones run on untouched.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				Required:      true,
				Description:   "The pool's name, unique in the tenant: lowercase letters, digits and inner dashes, 1–63 characters. Changing it replaces the pool.",
				Validators:    nameValidators(),
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"image": schema.StringAttribute{
				Required:    true,
				Description: "The sandbox image (a container image for `kubernetes`, a containerDisk for `kubevirt`; recorded for `local`).",
				Validators:  []validator.String{stringvalidator.LengthBetween(1, client.ImageMaxLength)},
			},
			"backend": schema.StringAttribute{
				Optional: true, Computed: true,
				Default:     stringdefault.StaticString(client.DefaultBackend),
				Description: "Where sandboxes run: `local`, `kubernetes` or `kubevirt`. Default `local`.",
				Validators:  []validator.String{stringvalidator.OneOf(client.Backends...)},
			},
			"cpu": schema.Float64Attribute{
				Optional: true, Computed: true,
				Default:     float64default.StaticFloat64(client.DefaultCPU),
				Description: "CPU cores per sandbox, in steps of 0.001 (millicores), above 0 and at most 64. Default 1.",
				Validators: []validator.Float64{
					float64validator.AtMost(client.CPUMax),
					float64validator.AtLeast(client.CPUStep),
					multipleOfValidator{step: client.CPUStep},
				},
			},
			"memory_mb": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:     int64default.StaticInt64(client.DefaultMemoryMB),
				Description: "Memory per sandbox in MiB, 256–262144. Default 2048.",
				Validators:  []validator.Int64{int64validator.Between(client.MemoryMBMin, client.MemoryMBMax)},
			},
			"autoscaling": schema.SingleNestedAttribute{
				Optional: true, Computed: true,
				Default: objectdefault.StaticValue(types.ObjectValueMust(autoscalingAttrTypes, map[string]attr.Value{
					"min":     types.Int64Value(client.DefaultAutoscalingMin),
					"initial": types.Int64Value(client.DefaultAutoscalingInitial),
					"max":     types.Int64Value(client.DefaultAutoscalingMax),
				})),
				Description: "How many sandboxes the pool keeps: between `min` and `max`, `initial` warm ones on create (min ≤ initial ≤ max). Default `{ min = 0, initial = 1, max = 5 }`. Changed in place.",
				Attributes: map[string]schema.Attribute{
					"min": schema.Int64Attribute{Required: true, Description: "At least this many sandboxes (0–1000).",
						Validators: []validator.Int64{int64validator.Between(0, client.AutoscalingSizeMax)}},
					"initial": schema.Int64Attribute{Required: true, Description: "Warm sandboxes made on create (0–1000).",
						Validators: []validator.Int64{int64validator.Between(0, client.AutoscalingSizeMax)}},
					"max": schema.Int64Attribute{Required: true, Description: "At most this many sandboxes (1–1000).",
						Validators: []validator.Int64{int64validator.Between(client.AutoscalingMaxMin, client.AutoscalingSizeMax)}},
				},
			},
			"claim_ttl_seconds": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:     int64default.StaticInt64(client.DefaultClaimTTLSeconds),
				Description: "A claim's default TTL in seconds (1–604800, at most `max_claim_lifetime_seconds`). Default 900.",
				Validators:  []validator.Int64{int64validator.Between(1, client.ClaimTTLSecondsMax)},
			},
			"max_claim_lifetime_seconds": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:     int64default.StaticInt64(client.DefaultMaxClaimLifetimeSeconds),
				Description: "The hard maximum of a claim's life in seconds (1–2592000). Default 86400.",
				Validators:  []validator.Int64{int64validator.Between(1, client.MaxClaimLifetimeSecondsMx)},
			},
			"idle_timeout_seconds": schema.Int64Attribute{
				Optional:    true,
				Description: "A claim with no heartbeat for this many seconds is reclaimed (1–604800). Unset: no idle timeout.",
				Validators:  []validator.Int64{int64validator.Between(1, client.IdleTimeoutSecondsMax)},
			},
			"idle_pause_seconds": schema.Int64Attribute{
				Optional:    true,
				Description: "Auto-pause: a claim with no driving call, viewer connection or run for this many seconds is paused (its desktop frozen, no CPU) until its next call (1–604800). Paused time counts toward the maximum lifetime only, not the TTL or the idle timeout. Unset: never. The kubernetes backend cannot pause.",
				Validators:  []validator.Int64{int64validator.Between(1, client.IdlePauseSecondsMax)},
			},
			"env": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true, Computed: true,
				Default:     mapdefault.StaticValue(types.MapValueMust(types.StringType, map[string]attr.Value{})),
				Description: "Non-secret environment of every sandbox (at most 64 variables, values ≤ 4096 characters). Secrets travel per claim instead.",
				Validators: []validator.Map{
					mapvalidator.SizeAtMost(client.EnvMaxVariables),
					mapvalidator.KeysAre(stringvalidator.RegexMatches(envNameRE, "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*, ≤ 128 characters)")),
					mapvalidator.ValueStringsAre(stringvalidator.LengthAtMost(client.EnvValueMaxLength)),
				},
			},
			"kubernetes": schema.SingleNestedAttribute{
				Optional:    true,
				Description: "Placement on the `kubernetes` and `kubevirt` backends (the local backend ignores it).",
				Attributes: map[string]schema.Attribute{
					"runtime_class_name": schema.StringAttribute{
						Optional: true, Description: "A RuntimeClass for the sandbox Pods, e.g. `gvisor`.",
						Validators: []validator.String{
							stringvalidator.LengthAtMost(client.RuntimeClassNameMaxLen),
							stringvalidator.RegexMatches(runtimeClassRE, "must be a RuntimeClass name"),
						},
					},
					"node_selector": schema.MapAttribute{
						ElementType: types.StringType, Optional: true,
						Description: "Node labels the sandboxes must run on (at most 32).",
						Validators: []validator.Map{
							mapvalidator.SizeAtMost(client.NodeSelectorMaxLabels),
							mapvalidator.KeysAre(labelKeyValidators()...),
							mapvalidator.ValueStringsAre(labelValueValidator()),
						},
					},
					"tolerations": schema.ListNestedAttribute{
						Optional: true, Description: "Pod tolerations (at most 32).",
						Validators: []validator.List{listvalidator.SizeAtMost(client.TolerationsMax)},
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"key": schema.StringAttribute{Optional: true, Description: "The taint key.", Validators: labelKeyValidators()},
							"operator": schema.StringAttribute{Optional: true, Computed: true,
								Default:     stringdefault.StaticString(client.DefaultTolerationOperator),
								Description: "`Equal` (default) or `Exists` (which takes no value).",
								Validators:  []validator.String{stringvalidator.OneOf(client.TolerationOperators...)}},
							"value": schema.StringAttribute{Optional: true, Description: "The taint value.",
								Validators: []validator.String{labelValueValidator()}},
							"effect": schema.StringAttribute{Optional: true, Description: "`NoSchedule`, `PreferNoSchedule` or `NoExecute`.",
								Validators: []validator.String{stringvalidator.OneOf(client.TolerationEffects...)}},
							"toleration_seconds": schema.Int64Attribute{Optional: true, Description: "With `NoExecute`: how long the sandbox stays on a tainted node.",
								Validators: []validator.Int64{int64validator.AtLeast(0)}},
						}},
					},
				},
			},
			"prime":         primeResourceAttribute(),
			"egress":        egressResourceAttribute(),
			"recording":     recordingResourceAttribute(),
			"profile_paths": profilePathsResourceAttribute(),
			"drain_timeout": schema.StringAttribute{
				Optional: true, Computed: true,
				Default: stringdefault.StaticString(defaultDrainTimeout),
				Description: "How long `destroy` waits for the pool's live claims to end after the drain starts " +
					"(a Go duration such as `30s`, `10m`; `0s` does not wait). Not sent to the API. Default `10m`.",
				Validators: []validator.String{durationValidator{}},
			},
			"id":         schema.StringAttribute{Computed: true, Description: "The pool's id (`pool_…`).", PlanModifiers: keepID},
			"state":      schema.StringAttribute{Computed: true, Description: "`active`, or `draining` after a delete."},
			"generation": schema.Int64Attribute{Computed: true, Description: "Bumped when the sandbox template (image, resources, env, kubernetes, prime) changes."},
			"counts":     countsAttribute(),
			"created_at": schema.StringAttribute{Computed: true, Description: "RFC 3339 creation time.", PlanModifiers: keepID},
			"updated_at": schema.StringAttribute{Computed: true, Description: "RFC 3339 time of the last change."},
		},
	}
}
