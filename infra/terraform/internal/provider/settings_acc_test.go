package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccAPIKey: a member key is created (its secret is in the state, sensitive, and works),
// a role change replaces it, and destroy revokes it. The provider reads its own credentials from
// CUBICLE_URL / CUBICLE_API_KEY here.
func TestAccAPIKey(t *testing.T) {
	live := accPreCheck(t)
	t.Setenv("CUBICLE_URL", live.Endpoint)
	t.Setenv("CUBICLE_API_KEY", live.AdminKey)
	config := func(role string) string {
		return requiredProviders + fmt.Sprintf("resource \"cubicle_api_key\" \"ci\" {\n  name = \"tf-acc-ci\"\n  role = %q\n}\n", role)
	}
	var secrets []string
	keepSecret := func(s *terraform.State) error {
		secrets = append(secrets, s.RootModule().Resources["cubicle_api_key.ci"].Primary.Attributes["key"])
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: accProviders,
		CheckDestroy: func(*terraform.State) error {
			for _, secret := range secrets {
				if _, err := apiClient(t, live.Endpoint, secret).GetTenant(context.Background()); err == nil ||
					!strings.Contains(err.Error(), "401") {
					return fmt.Errorf("a key created by the test still works after destroy (err %v)", err)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config("member"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("cubicle_api_key.ci", tfjsonpath.New("id"), knownvalue.StringRegexp(regexp.MustCompile(`^key_`))),
					statecheck.ExpectKnownValue("cubicle_api_key.ci", tfjsonpath.New("role"), knownvalue.StringExact("member")),
				},
				Check: resource.ComposeTestCheckFunc(keepSecret, func(s *terraform.State) error {
					// The secret in the state is a working key of the tenant.
					tenant, err := apiClient(t, live.Endpoint, secrets[0]).GetTenant(context.Background())
					if err != nil {
						return fmt.Errorf("the created key does not work: %v", err)
					}
					if tenant.ID == "" {
						return fmt.Errorf("the created key read no tenant")
					}
					return nil
				}),
			},
			{
				Config: config("admin"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("cubicle_api_key.ci", plancheck.ResourceActionDestroyBeforeCreate)},
				},
				Check: keepSecret,
			},
			{
				ResourceName:      "cubicle_api_key.ci",
				ImportState:       true,
				ImportStateVerify: true,
				// The secret is shown once, at creation: an import cannot know it.
				ImportStateVerifyIgnore: []string{"key"},
			},
		},
	})
}

// TestAccTenantSettings: embed_origins set, changed, imported, changed outside Terraform (drift),
// and cleared on destroy.
func TestAccTenantSettings(t *testing.T) {
	live := accPreCheck(t)
	api := apiClient(t, live.Endpoint, live.AdminKey)
	config := func(origins string) string {
		return providerBlock(live.Endpoint, live.AdminKey) + fmt.Sprintf("resource \"cubicle_tenant_settings\" \"this\" {\n  embed_origins = %s\n}\n", origins)
	}
	addr := "cubicle_tenant_settings.this"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: accProviders,
		CheckDestroy: func(*terraform.State) error {
			tenant, err := api.GetTenant(context.Background())
			if err != nil {
				return err
			}
			if len(tenant.EmbedOrigins) != 0 {
				return fmt.Errorf("embed_origins not cleared on destroy: %v", tenant.EmbedOrigins)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config(`["https://app.example.com"]`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringRegexp(regexp.MustCompile(`^ten_`))),
				},
			},
			{
				Config: config(`["https://app.example.com", "http://localhost:3000"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{ResourceName: addr, ImportState: true, ImportStateId: "tenant", ImportStateVerify: true},
			{
				PreConfig: func() {
					if _, err := api.UpdateTenant(context.Background(), updateOrigins("https://other.example.com")); err != nil {
						t.Fatalf("out-of-band PATCH: %v", err)
					}
				},
				Config: config(`["https://app.example.com", "http://localhost:3000"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
				},
			},
		},
	})
}

// TestAccTenantSettingsInvalidOrigin: an origin the contract refuses fails at plan.
func TestAccTenantSettingsInvalidOrigin(t *testing.T) {
	live := accPreCheck(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: accProviders,
		Steps: []resource.TestStep{{
			Config:      providerBlock(live.Endpoint, live.AdminKey) + "resource \"cubicle_tenant_settings\" \"this\" {\n  embed_origins = [\"https://App.example.com/path\"]\n}\n",
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`must be an origin like`),
		}},
	})
}
