package provider

import (
	"context"
	"regexp"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var embedOriginRE = regexp.MustCompile(client.EmbedOriginPattern)

func newTenantSettingsResource() resource.Resource { return &tenantSettingsResource{} }

type tenantSettingsResource struct{ client *client.Client }

type tenantSettingsModel struct {
	ID           types.String `tfsdk:"id"`
	EmbedOrigins types.List   `tfsdk:"embed_origins"`
}

func (r *tenantSettingsResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tenant_settings"
}

func (r *tenantSettingsResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Settings of the provider key's own tenant (needs an admin key): the origins allowed to embed " +
			"the live viewer (`PATCH /v1/tenant`). One per tenant; destroying it clears the list.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, Description: "The tenant's id (`ten_…`).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"embed_origins": schema.ListAttribute{
				Required: true, ElementType: types.StringType,
				Description: "Origins allowed to frame `/embed/{ticket}` (CSP frame-ancestors): `https://host[:port]` " +
					"(a leading `*.` allows subdomains) or `http://localhost[:port]` / `http://127.0.0.1[:port]`; " +
					"lowercase, no path, unique, at most 50.",
				Validators: []validator.List{
					listvalidator.SizeAtMost(client.EmbedOriginsMax),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(
						stringvalidator.LengthAtMost(client.EmbedOriginMaxLength),
						stringvalidator.RegexMatches(embedOriginRE, "must be an origin like https://app.example.com[:port] or http://localhost[:port], lowercase, no path"),
					),
				},
			},
		},
	}
}

func (r *tenantSettingsResource) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	if c := clientFrom(req.ProviderData); c != nil {
		r.client = c
	}
}

func (r *tenantSettingsResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	// The tenant is the key's own; the id given is only recorded until Read replaces it.
	resp.Diagnostics.Append(resp.State.Set(ctx, &tenantSettingsModel{
		ID: types.StringValue(req.ID), EmbedOrigins: types.ListNull(types.StringType),
	})...)
}

func (r *tenantSettingsResource) write(ctx context.Context, plan tenantSettingsModel, state *tfState) {
	origins := []string{}
	state.diags.Append(plan.EmbedOrigins.ElementsAs(ctx, &origins, false)...)
	if state.diags.HasError() {
		return
	}
	t, err := r.client.UpdateTenant(ctx, client.UpdateTenantRequest{EmbedOrigins: origins})
	if err != nil {
		addAPIError(state.diags, r.client, "set the tenant's embed_origins (PATCH /v1/tenant)", err)
		return
	}
	state.set(ctx, tenantModelFrom(ctx, t, state))
}

func tenantModelFrom(ctx context.Context, t *client.Tenant, state *tfState) *tenantSettingsModel {
	origins := t.EmbedOrigins
	if origins == nil {
		origins = []string{}
	}
	list, d := types.ListValueFrom(ctx, types.StringType, origins)
	state.diags.Append(d...)
	return &tenantSettingsModel{ID: types.StringValue(t.ID), EmbedOrigins: list}
}

func (r *tenantSettingsResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan tenantSettingsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if !resp.Diagnostics.HasError() {
		r.write(ctx, plan, &tfState{diags: &resp.Diagnostics, set: func(ctx context.Context, v any) { resp.Diagnostics.Append(resp.State.Set(ctx, v)...) }})
	}
}

func (r *tenantSettingsResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan tenantSettingsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if !resp.Diagnostics.HasError() {
		r.write(ctx, plan, &tfState{diags: &resp.Diagnostics, set: func(ctx context.Context, v any) { resp.Diagnostics.Append(resp.State.Set(ctx, v)...) }})
	}
}

func (r *tenantSettingsResource) Read(ctx context.Context, _ resource.ReadRequest, resp *resource.ReadResponse) {
	t, err := r.client.GetTenant(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, r.client, "read the tenant (GET /v1/tenant)", err)
		return
	}
	st := &tfState{diags: &resp.Diagnostics}
	resp.Diagnostics.Append(resp.State.Set(ctx, tenantModelFrom(ctx, t, st))...)
}

func (r *tenantSettingsResource) Delete(ctx context.Context, _ resource.DeleteRequest, resp *resource.DeleteResponse) {
	if _, err := r.client.UpdateTenant(ctx, client.UpdateTenantRequest{EmbedOrigins: []string{}}); err != nil {
		addAPIError(&resp.Diagnostics, r.client, "clear the tenant's embed_origins (PATCH /v1/tenant)", err)
	}
}
