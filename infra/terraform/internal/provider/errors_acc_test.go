package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestAccOtherTenantsPoolIsNotFound: a pool of another tenant is invisible (404) and the error
// says so in the user's terms, whether it is read or imported.
func TestAccOtherTenantsPoolIsNotFound(t *testing.T) {
	live := accPreCheck(t)
	notFound := regexp.MustCompile(`Not found in this tenant \(404\)`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: accProviders,
		Steps: []resource.TestStep{
			{
				Config:      providerBlock(live.Endpoint, live.AdminKey) + fmt.Sprintf("data \"cubicle_pool\" \"theirs\" {\n  name = %q\n}\n", live.OtherPool),
				ExpectError: notFound,
			},
			{
				Config:        providerBlock(live.Endpoint, live.AdminKey) + fmt.Sprintf("resource \"cubicle_pool\" \"theirs\" {\n  name  = %q\n  image = \"local\"\n}\n", live.OtherPool),
				ResourceName:  "cubicle_pool.theirs",
				ImportState:   true,
				ImportStateId: live.OtherPool,
				ExpectError:   notFound,
			},
		},
	})
	// The other tenant's key does see it: the 404 above is isolation, not a missing pool.
	if _, err := apiClient(t, live.Endpoint, live.OtherTenantKey).GetPool(t.Context(), live.OtherPool); err != nil {
		t.Fatalf("the other tenant cannot read its own pool: %v", err)
	}
}

// TestAccInvalidSpecFailsAtPlan: each of the contract's limits fails `plan` (PlanOnly: nothing is
// applied), with a message naming the rule.
func TestAccInvalidSpecFailsAtPlan(t *testing.T) {
	live := accPreCheck(t)
	cases := []struct{ body, want string }{
		{`image = "local"
  autoscaling = { min = 2, initial = 1, max = 5 }`, `min ≤ initial ≤ max`},
		{`image = "local"
  autoscaling = { min = 0, initial = 0, max = 0 }`, `autoscaling.max`},
		{`image = "local"
  cpu   = 0.0005`, `multiple of 0.001`},
		{`image = "local"
  cpu   = 65`, `cpu`},
		{`image     = "local"
  memory_mb = 128`, `memory_mb`},
		{`image = "local"
  claim_ttl_seconds          = 7200
  max_claim_lifetime_seconds = 3600`, `must not exceed max_claim_lifetime_seconds`},
		{`image = "local"
  env   = { "1BAD" = "x" }`, `environment variable name`},
		{`image = ""`, `image`},
		{`image = "local"
  backend = "docker"`, `backend`},
		{`image = "local"
  kubernetes = { tolerations = [{ key = "gpu", operator = "Exists", value = "yes" }] }`, `operator Exists takes no value`},
		{`image = "local"
  kubernetes = { node_selector = { "bad key!" = "x" } }`, `Kubernetes label key`},
		{`image = "local"
  drain_timeout = "soon"`, `duration`},
		{`image = "local"
  kubernetes = {}`, `Set at least one of runtime_class_name`},
	}
	steps := []resource.TestStep{{
		Config:      providerBlock(live.Endpoint, live.AdminKey) + "resource \"cubicle_pool\" \"bad\" {\n  name  = \"Bad_Name\"\n  image = \"local\"\n}\n",
		PlanOnly:    true,
		ExpectError: regexp.MustCompile(`lowercase letters, digits and inner dashes`),
	}}
	for _, c := range cases {
		steps = append(steps, resource.TestStep{
			Config:      providerBlock(live.Endpoint, live.AdminKey) + fmt.Sprintf("resource \"cubicle_pool\" \"bad\" {\n  name  = \"tf-acc-bad\"\n  %s\n}\n", c.body),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(regexp.QuoteMeta(c.want)),
		})
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: accProviders, Steps: steps})
}

// TestAccCredentialDiagnostics: a wrong endpoint, a revoked key (401) and a member key where an
// admin key is needed (403) each get a diagnostic that says which it is.
func TestAccCredentialDiagnostics(t *testing.T) {
	live := accPreCheck(t)
	pool := "resource \"cubicle_pool\" \"p\" {\n  name  = \"tf-acc-creds\"\n  image = \"local\"\n  autoscaling = { min = 0, initial = 0, max = 1 }\n}\n"
	settings := "resource \"cubicle_tenant_settings\" \"s\" {\n  embed_origins = [\"https://app.example.com\"]\n}\n"
	key := "resource \"cubicle_api_key\" \"k\" {\n  name = \"tf-acc-creds\"\n}\n"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: accProviders,
		Steps: []resource.TestStep{
			{
				// Nothing listens on port 1.
				Config:      providerBlock("http://127.0.0.1:1", live.AdminKey) + pool,
				ExpectError: regexp.MustCompile(`Cannot reach the Cubicle API at http://127.0.0.1:1`),
			},
			{
				Config:      providerBlock("not a url", live.AdminKey) + pool,
				ExpectError: regexp.MustCompile(`Invalid Cubicle endpoint`),
			},
			{
				Config:      providerBlock(live.Endpoint, live.RevokedKey) + pool,
				ExpectError: regexp.MustCompile(`Cubicle rejected the API key \(401 unauthenticated\)`),
			},
			{
				Config:      providerBlock(live.Endpoint, live.MemberKey) + settings,
				ExpectError: regexp.MustCompile(`The API key's role may not do this \(403 forbidden\)`),
			},
			{
				Config:      providerBlock(live.Endpoint, live.MemberKey) + key,
				ExpectError: regexp.MustCompile(`The API key's role may not do this \(403 forbidden\)`),
			},
			{
				// A member key may manage pools.
				Config: providerBlock(live.Endpoint, live.MemberKey) + pool,
			},
		},
	})
}
