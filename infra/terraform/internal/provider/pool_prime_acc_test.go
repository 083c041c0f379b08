package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccPoolPrime: a prime is applied (the API's default timeout shows in state, the next plan
// is empty, the generation moves: warm desktops roll), read back by the data source, removed
// again in place (null, another generation); a prime the API would refuse fails at plan first.
// The pool keeps nothing warm (initial 0): no desktop is started.
func TestAccPoolPrime(t *testing.T) {
	live := accPreCheck(t)
	const addr = "cubicle_pool.primed"
	base := providerBlock(live.Endpoint, live.AdminKey) + `
resource "cubicle_pool" "primed" {
  name  = "tf-acc-primed"
  image = "local"
  autoscaling = { min = 0, initial = 0, max = 1 }
%s
}
`
	primed := `  prime = {
    apps = [{
      app      = "browser"
      url      = "file:///usr/share/doc/base-passwd/users-and-groups.html"
      wait_for = { kind = "window_title", contains = "Users and Groups" }
    }]
  }
`
	withData := base + `
data "cubicle_pool" "primed" {
  name = cubicle_pool.primed.name
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: accProviders,
		Steps: []resource.TestStep{
			// Refused at plan: nothing is created (a last step with an error would break destroy).
			{
				Config:      fmtConfig(base, "  prime = { apps = [{ app = \"terminal\", url = \"https://example.com/\" }] }\n"),
				ExpectError: regexp.MustCompile(`url is for a browser app`),
			},
			{Config: fmtConfig(base, "")},
			{
				Config: fmtConfig(withData, primed),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("prime").AtMapKey("timeout_seconds"), knownvalue.Int64Exact(60)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("prime").AtMapKey("apps").AtSliceIndex(0).AtMapKey("wait_for").AtMapKey("kind"), knownvalue.StringExact("window_title")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("generation"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue("data.cubicle_pool.primed", tfjsonpath.New("prime").AtMapKey("apps").AtSliceIndex(0).AtMapKey("app"), knownvalue.StringExact("browser")),
				},
			},
			{
				Config: fmtConfig(base, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("prime"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("generation"), knownvalue.Int64Exact(3)),
				},
			},
		},
	})
}

// fmtConfig fills a configuration's one %s (the pool's extra attributes).
func fmtConfig(config, extra string) string {
	return regexp.MustCompile(`%s`).ReplaceAllLiteralString(config, extra)
}
