// Package provider is the Cubicle Terraform provider: pools, API keys and tenant settings as code.
package provider

import (
	"context"
	"os"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// New returns the provider factory for providerserver (main.go and the acceptance tests).
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &cubicleProvider{version: version} }
}

type cubicleProvider struct{ version string }

type providerModel struct {
	Endpoint types.String `tfsdk:"endpoint"`
	APIKey   types.String `tfsdk:"api_key"`
}

func (p *cubicleProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "cubicle"
	resp.Version = p.version
}

func (p *cubicleProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manage Cubicle pools, API keys and tenant settings through the Cubicle REST API.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				Optional:    true,
				Description: "The Cubicle API's base URL, e.g. `https://cubicle.example.com`. Default: the `CUBICLE_URL` environment variable (the name the SDKs and the CLI read; `CUBICLE_ENDPOINT`, its former name, still works and is deprecated).",
			},
			"api_key": schema.StringAttribute{
				Optional: true, Sensitive: true,
				Description: "An API key of the tenant (`cbk_…`). Pools need any key; `cubicle_api_key` and `cubicle_tenant_settings` need an admin key. Default: the `CUBICLE_API_KEY` environment variable.",
			},
		},
	}
}

func (p *cubicleProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if cfg.Endpoint.IsUnknown() || cfg.APIKey.IsUnknown() {
		// Known only after another resource is applied: configure on the next run.
		return
	}
	endpoint := cfg.Endpoint.ValueString()
	if endpoint == "" {
		endpoint = endpointFromEnv(&resp.Diagnostics)
	}
	apiKey := cfg.APIKey.ValueString()
	if apiKey == "" {
		apiKey = os.Getenv("CUBICLE_API_KEY")
	}
	if endpoint == "" {
		resp.Diagnostics.AddAttributeError(path.Root("endpoint"), "Missing Cubicle endpoint",
			"Set endpoint in the provider block or the CUBICLE_URL environment variable, e.g. https://cubicle.example.com.")
	}
	if apiKey == "" {
		resp.Diagnostics.AddAttributeError(path.Root("api_key"), "Missing Cubicle API key",
			"Set api_key in the provider block or the CUBICLE_API_KEY environment variable.")
	}
	if resp.Diagnostics.HasError() {
		return
	}
	c, err := client.New(endpoint, apiKey, "terraform-provider-cubicle/"+p.version)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("endpoint"), "Invalid Cubicle endpoint", err.Error())
		return
	}
	// One cheap call proves the endpoint is Cubicle and the key is valid, so a typo or a revoked
	// key is reported once, here, instead of on every resource.
	tenant, err := c.GetTenant(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, c, "check the provider's credentials (GET /v1/tenant)", err)
		return
	}
	tflog.Info(ctx, "connected to Cubicle", map[string]any{"endpoint": c.Endpoint(), "tenant": tenant.ID})
	resp.DataSourceData = c
	resp.ResourceData = c
}

func (p *cubicleProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{newPoolResource, newAPIKeyResource, newTenantSettingsResource}
}

func (p *cubicleProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{newPoolDataSource, newPoolsDataSource}
}
