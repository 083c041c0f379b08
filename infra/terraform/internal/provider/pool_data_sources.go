package provider

import (
	"context"
	"fmt"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// poolDataAttributes lists a pool's attributes, all read from the API; with nameRequired the
// name is the data source's one argument.
func poolDataAttributes(nameRequired bool) map[string]schema.Attribute {
	str := func(d string) schema.StringAttribute { return schema.StringAttribute{Computed: true, Description: d} }
	i64 := func(d string) schema.Int64Attribute { return schema.Int64Attribute{Computed: true, Description: d} }
	name := schema.StringAttribute{Computed: true, Description: "The pool's name."}
	if nameRequired {
		name = schema.StringAttribute{Required: true, Description: "The pool's name.", Validators: []validator.String(nameValidators())}
	}
	return map[string]schema.Attribute{
		"name":      name,
		"id":        str("The pool's id (`pool_…`)."),
		"image":     str("The sandbox image."),
		"backend":   str("`local`, `kubernetes` or `kubevirt`."),
		"cpu":       schema.Float64Attribute{Computed: true, Description: "CPU cores per sandbox."},
		"memory_mb": i64("Memory per sandbox in MiB."),
		"autoscaling": schema.SingleNestedAttribute{Computed: true, Description: "min ≤ initial ≤ max sandboxes.",
			Attributes: map[string]schema.Attribute{"min": i64("Minimum."), "initial": i64("Warm on create."), "max": i64("Maximum.")}},
		"claim_ttl_seconds":          i64("A claim's default TTL."),
		"max_claim_lifetime_seconds": i64("A claim's hard maximum life."),
		"idle_timeout_seconds":       i64("Heartbeat window; null when disabled."),
		"idle_pause_seconds":         i64("Auto-pause after this many seconds without a driving call, viewer or run; null when never."),
		"env":                        schema.MapAttribute{Computed: true, ElementType: types.StringType, Description: "Non-secret sandbox environment."},
		"kubernetes": schema.SingleNestedAttribute{Computed: true, Description: "Placement on kubernetes/kubevirt; null when unset.",
			Attributes: map[string]schema.Attribute{
				"runtime_class_name": str("RuntimeClass of the Pods."),
				"node_selector":      schema.MapAttribute{Computed: true, ElementType: types.StringType, Description: "Node labels."},
				"tolerations": schema.ListNestedAttribute{Computed: true, Description: "Pod tolerations.",
					NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
						"key": str("Taint key."), "operator": str("Equal or Exists."), "value": str("Taint value."),
						"effect": str("Taint effect."), "toleration_seconds": i64("Seconds on a NoExecute taint."),
					}}},
			}},
		"prime":         primeDataAttribute(),
		"egress":        egressDataAttribute(),
		"recording":     recordingDataAttribute(),
		"profile_paths": profilePathsDataAttribute(),
		"state":         str("`active` or `draining`."),
		"generation":    i64("Sandbox template generation."),
		"counts": schema.SingleNestedAttribute{Computed: true, Description: "Live sandbox counts.",
			Attributes: map[string]schema.Attribute{
				"provisioning": i64("Starting."), "warm": i64("Ready to claim."), "claimed": i64("Held by a claim."),
				"releasing": i64("Being destroyed."), "failed": i64("Failed to start."),
			}},
		"created_at": str("RFC 3339 creation time."),
		"updated_at": str("RFC 3339 time of the last change."),
	}
}

func poolDataFrom(ctx context.Context, p *client.Pool) (poolDataModel, diag.Diagnostics) {
	spec, diags := specModelFromPool(ctx, p)
	var d diag.Diagnostics
	// The data sources' recording carries the API's estimate too (the resource's does not).
	spec.Recording, d = recordingDataFromPool(p.Recording)
	diags.Append(d...)
	status, d := statusModelFromPool(p)
	diags.Append(d...)
	return poolDataModel{poolSpecModel: spec, poolStatusModel: status}, diags
}

func clientFrom(data any) *client.Client {
	c, _ := data.(*client.Client)
	return c
}

// cubicle_pool (data): one pool by name.

func newPoolDataSource() datasource.DataSource { return &poolDataSource{} }

type poolDataSource struct{ client *client.Client }

func (d *poolDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pool"
}

func (d *poolDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Reads one pool of the tenant by name, with its live counts (`GET /v1/pools/{name}`).",
		Attributes:  poolDataAttributes(true),
	}
}

func (d *poolDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if c := clientFrom(req.ProviderData); c != nil {
		d.client = c
	}
}

func (d *poolDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var cfg poolDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := cfg.Name.ValueString()
	pool, err := d.client.GetPool(ctx, name)
	if err != nil {
		addAPIError(&resp.Diagnostics, d.client, fmt.Sprintf("read pool %q (GET /v1/pools/%s)", name, name), err)
		return
	}
	m, diags := poolDataFrom(ctx, pool)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// cubicle_pools (data): every pool of the tenant.

func newPoolsDataSource() datasource.DataSource { return &poolsDataSource{} }

type poolsDataSource struct{ client *client.Client }

type poolsDataModel struct {
	Names types.List      `tfsdk:"names"`
	Pools []poolDataModel `tfsdk:"pools"`
}

func (d *poolsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pools"
}

func (d *poolsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Lists every pool of the tenant in creation order, with live counts (`GET /v1/pools`, all pages).",
		Attributes: map[string]schema.Attribute{
			"names": schema.ListAttribute{Computed: true, ElementType: types.StringType, Description: "The pools' names, in creation order."},
			"pools": schema.ListNestedAttribute{Computed: true, Description: "The pools, in creation order.",
				NestedObject: schema.NestedAttributeObject{Attributes: poolDataAttributes(false)}},
		},
	}
}

func (d *poolsDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if c := clientFrom(req.ProviderData); c != nil {
		d.client = c
	}
}

func (d *poolsDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	pools, err := d.client.ListPools(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, d.client, "list pools (GET /v1/pools)", err)
		return
	}
	out := poolsDataModel{Pools: []poolDataModel{}}
	names := []string{}
	for i := range pools {
		m, diags := poolDataFrom(ctx, &pools[i])
		resp.Diagnostics.Append(diags...)
		out.Pools = append(out.Pools, m)
		names = append(names, pools[i].Name)
	}
	var diags diag.Diagnostics
	out.Names, diags = types.ListValueFrom(ctx, types.StringType, names)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &out)...)
}
