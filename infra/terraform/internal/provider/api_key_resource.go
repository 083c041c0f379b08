package provider

import (
	"context"
	"fmt"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func newAPIKeyResource() resource.Resource { return &apiKeyResource{} }

type apiKeyResource struct{ client *client.Client }

type apiKeyModel struct {
	ID        types.String `tfsdk:"id"`
	Name      types.String `tfsdk:"name"`
	Role      types.String `tfsdk:"role"`
	Prefix    types.String `tfsdk:"prefix"`
	Key       types.String `tfsdk:"key"`
	CreatedAt types.String `tfsdk:"created_at"`
}

func (r *apiKeyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_api_key"
}

func (r *apiKeyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		Description: "An API key of the provider's tenant (needs an admin key). The API shows the secret once, " +
			"in the creation answer, so Terraform keeps it in the state as a sensitive value: protect the state " +
			"(encrypted remote backend, OpenTofu state encryption) or create keys outside Terraform. The API cannot " +
			"rename a key or change its role: either change replaces the key (a new secret). Destroy revokes it.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Required: true, PlanModifiers: replace,
				Description: "A label for the key (1–200 characters). Changing it replaces the key.",
				Validators:  []validator.String{stringvalidator.LengthBetween(1, client.APIKeyNameMaxLength)}},
			"role": schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: replace,
				Default:     stringdefault.StaticString(client.DefaultAPIKeyRole),
				Description: "`admin` (keys, tenant settings, everything) or `member` (pools and claims). Default `member`. Changing it replaces the key.",
				Validators:  []validator.String{stringvalidator.OneOf(client.APIKeyRoles...)}},
			"key": schema.StringAttribute{Computed: true, Sensitive: true, PlanModifiers: keep,
				Description: "The secret, known only to the run that created the key (null after an import)."},
			"id":         schema.StringAttribute{Computed: true, PlanModifiers: keep, Description: "The key's id (`key_…`)."},
			"prefix":     schema.StringAttribute{Computed: true, PlanModifiers: keep, Description: "The key's first characters, to recognise it."},
			"created_at": schema.StringAttribute{Computed: true, PlanModifiers: keep, Description: "RFC 3339 creation time."},
		},
	}
}

func (r *apiKeyResource) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	if c := clientFrom(req.ProviderData); c != nil {
		r.client = c
	}
}

func (r *apiKeyResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}

func (r *apiKeyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan apiKeyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	created, err := r.client.CreateAPIKey(ctx, client.CreateAPIKeyRequest{Name: plan.Name.ValueString(), Role: plan.Role.ValueString()})
	if err != nil {
		addAPIError(&resp.Diagnostics, r.client, "create API key (POST /v1/api-keys)", err)
		return
	}
	state := apiKeyModelFrom(created.APIKey)
	state.Key = types.StringValue(created.Key)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func apiKeyModelFrom(k client.APIKey) apiKeyModel {
	return apiKeyModel{
		ID: types.StringValue(k.ID), Name: types.StringValue(k.Name), Role: types.StringValue(k.Role),
		Prefix: types.StringValue(k.Prefix), CreatedAt: types.StringValue(k.CreatedAt), Key: types.StringNull(),
	}
}

// Read finds the key in the tenant's list (the API has no single-key read); a key revoked or
// gone outside Terraform leaves the state, so the next plan creates a new one.
func (r *apiKeyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state apiKeyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	keys, err := r.client.ListAPIKeys(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, r.client, "read API keys (GET /v1/api-keys)", err)
		return
	}
	for _, k := range keys {
		if k.ID != state.ID.ValueString() {
			continue
		}
		if k.RevokedAt != nil {
			break
		}
		next := apiKeyModelFrom(k)
		next.Key = state.Key
		resp.Diagnostics.Append(resp.State.Set(ctx, &next)...)
		return
	}
	if state.Name.IsNull() {
		resp.Diagnostics.AddError("API key not found",
			fmt.Sprintf("The tenant has no live API key with id %q (unknown, revoked, or another tenant's).", state.ID.ValueString()))
		return
	}
	resp.State.RemoveResource(ctx)
}

func (r *apiKeyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	// Every configurable attribute requires replacement; nothing reaches here but computed ones.
	var plan apiKeyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *apiKeyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state apiKeyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	err := r.client.RevokeAPIKey(ctx, state.ID.ValueString())
	if err != nil && !client.IsNotFound(err) {
		addAPIError(&resp.Diagnostics, r.client, fmt.Sprintf("revoke API key %s (DELETE /v1/api-keys/%s)", state.ID.ValueString(), state.ID.ValueString()), err)
	}
}
