package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// A pool with nothing warm (initial 0): the lifecycle needs no desktops.
func poolConfig(live liveCubicle, image string, max int) string {
	return providerBlock(live.Endpoint, live.AdminKey) + fmt.Sprintf(`
resource "cubicle_pool" "web" {
  name  = "tf-acc-web"
  image = %q
  autoscaling = {
    min     = 0
    initial = 0
    max     = %d
  }
  env = { GREETING = "hello" }
}

data "cubicle_pool" "web" {
  name = cubicle_pool.web.name
}

data "cubicle_pools" "all" {
  depends_on = [cubicle_pool.web]
}
`, image, max)
}

const poolAddr = "cubicle_pool.web"

// TestAccPoolLifecycle: create → the next plan is empty → autoscaling and image change in place
// (same id) → import by name → a change made outside Terraform shows in the plan and is undone
// → a pool deleted outside Terraform is created again → destroy.
func TestAccPoolLifecycle(t *testing.T) {
	live := accPreCheck(t)
	api := apiClient(t, live.Endpoint, live.AdminKey)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: accProviders,
		CheckDestroy: func(*terraform.State) error {
			if _, err := api.GetPool(context.Background(), "tf-acc-web"); !client.IsNotFound(err) {
				return fmt.Errorf("pool tf-acc-web still exists after destroy (err %v)", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: poolConfig(live, "local", 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue(poolAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("id"), knownvalue.StringRegexp(regexp.MustCompile(`^pool_[0-9a-z]{26}$`))),
					// The API's defaults, as computed values.
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("backend"), knownvalue.StringExact("local")),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("cpu"), knownvalue.Float64Exact(1)),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("memory_mb"), knownvalue.Int64Exact(2048)),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("claim_ttl_seconds"), knownvalue.Int64Exact(900)),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("max_claim_lifetime_seconds"), knownvalue.Int64Exact(86400)),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("idle_timeout_seconds"), knownvalue.Null()),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("kubernetes"), knownvalue.Null()),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("state"), knownvalue.StringExact("active")),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("counts").AtMapKey("claimed"), knownvalue.Int64Exact(0)),
					// The data sources read the same pool.
					statecheck.ExpectKnownValue("data.cubicle_pool.web", tfjsonpath.New("image"), knownvalue.StringExact("local")),
					statecheck.ExpectKnownValue("data.cubicle_pool.web", tfjsonpath.New("env").AtMapKey("GREETING"), knownvalue.StringExact("hello")),
					statecheck.ExpectKnownValue("data.cubicle_pools.all", tfjsonpath.New("names"), knownvalue.ListPartial(map[int]knownvalue.Check{0: knownvalue.StringExact("tf-acc-web")})),
				},
			},
			{
				// Autoscaling is not part of the sandbox template: in place, generation unchanged.
				Config: poolConfig(live, "local", 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue(poolAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("autoscaling").AtMapKey("max"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
				},
			},
			{
				// The API rolls warm sandboxes to a new image in place: no replacement, generation 2.
				Config: poolConfig(live, "local-v2", 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue(poolAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("image"), knownvalue.StringExact("local-v2")),
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("generation"), knownvalue.Int64Exact(2)),
				},
			},
			{
				ResourceName:                         poolAddr,
				ImportState:                          true,
				ImportStateId:                        "tf-acc-web",
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "name",
				// Live counts move on their own.
				ImportStateVerifyIgnore: []string{"counts"},
			},
			{
				// Someone doubles the memory outside Terraform: the plan shows it and apply undoes it.
				PreConfig: func() {
					spec := client.PoolSpec{Image: "local-v2", Backend: "local", CPU: 1, MemoryMB: 4096,
						Autoscaling: client.Autoscaling{Min: 0, Initial: 0, Max: 2}, ClaimTTLSeconds: 900,
						MaxClaimLifetimeSeconds: 86400, Env: map[string]string{"GREETING": "hello"}}
					if _, err := api.ApplyPool(context.Background(), "tf-acc-web", spec); err != nil {
						t.Fatalf("out-of-band PUT: %v", err)
					}
				},
				Config: poolConfig(live, "local-v2", 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(poolAddr, tfjsonpath.New("memory_mb"), knownvalue.Int64Exact(2048)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(poolAddr, tfjsonpath.New("id"))},
			},
			{
				// Deleted outside Terraform: the plan creates it again.
				PreConfig: func() {
					if _, err := api.DeletePool(context.Background(), "tf-acc-web"); err != nil {
						t.Fatalf("out-of-band DELETE: %v", err)
					}
				},
				Config: poolConfig(live, "local-v2", 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
				},
			},
		},
	})
}

func drainConfig(live liveCubicle, name, timeout string) string {
	return providerBlock(live.Endpoint, live.AdminKey) + fmt.Sprintf(`
resource "cubicle_pool" "drain" {
  name          = %q
  image         = "local"
  autoscaling   = { min = 0, initial = 1, max = 1 }
  drain_timeout = %q
}
`, name, timeout)
}

// TestAccPoolDestroyWaitsForDrain: destroy of a pool with a live claim (one real desktop) returns
// only after the claim has ended, here at its TTL.
func TestAccPoolDestroyWaitsForDrain(t *testing.T) {
	live := accPreCheck(t)
	var claim client.Claim
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: accProviders,
		CheckDestroy: func(*terraform.State) error {
			got := getClaim(t, live.Endpoint, live.AdminKey, claim.ID)
			if got["status"] != "released" || got["release_reason"] != "ttl_expired" {
				return fmt.Errorf("destroy returned while claim %s was %v (%v): it did not wait for the drain", claim.ID, got["status"], got["release_reason"])
			}
			expires, _ := time.Parse(time.RFC3339, claim.ExpiresAt)
			if time.Now().Before(expires) {
				return fmt.Errorf("destroy returned at %s, before the claim's expiry %s", time.Now().Format(time.RFC3339), claim.ExpiresAt)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: drainConfig(live, "tf-acc-drain", "3m")},
			{
				// An agent holds a desktop for 40 s; the implicit destroy after this step must wait for it.
				PreConfig: func() { claim = claimPool(t, live.Endpoint, live.AdminKey, "tf-acc-drain", 40) },
				Config:    drainConfig(live, "tf-acc-drain", "3m"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					// The claim moved the live counts; that is no diff.
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("cubicle_pool.drain", tfjsonpath.New("counts").AtMapKey("claimed"), knownvalue.Int64Exact(1)),
				},
			},
		},
	})
}

// TestAccPoolDrainTimeoutNamesTheClaims: a drain_timeout shorter than a live claim is an error
// that says which claims it waited for.
func TestAccPoolDrainTimeoutNamesTheClaims(t *testing.T) {
	live := accPreCheck(t)
	var claim client.Claim
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: accProviders,
		CheckDestroy: func(*terraform.State) error {
			// Free the desktop now rather than at its TTL.
			return releaseClaim(live.Endpoint, live.AdminKey, claim.ID)
		},
		Steps: []resource.TestStep{
			{Config: drainConfig(live, "tf-acc-drain-timeout", "2s")},
			{
				PreConfig:   func() { claim = claimPool(t, live.Endpoint, live.AdminKey, "tf-acc-drain-timeout", 300) },
				Config:      drainConfig(live, "tf-acc-drain-timeout", "2s"),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Pool did not drain within.*clm_[0-9a-z]{26}`),
			},
		},
	})
}

// TestAccPoolEveryField: each field of the spec survives apply → refresh with an empty plan
// (kubernetes placement with a defaulted toleration operator, a fractional cpu, an idle
// timeout), and removing the optional blocks sets them back to the API's null.
func TestAccPoolEveryField(t *testing.T) {
	live := accPreCheck(t)
	full := providerBlock(live.Endpoint, live.AdminKey) + `
resource "cubicle_pool" "full" {
  name                       = "tf-acc-full"
  image                      = "ghcr.io/acme/desktop:1"
  backend                    = "kubernetes"
  cpu                        = 0.5
  memory_mb                  = 1024
  autoscaling                = { min = 0, initial = 0, max = 3 }
  claim_ttl_seconds          = 60
  max_claim_lifetime_seconds = 3600
  idle_timeout_seconds       = 120
  env                        = { LANG = "C.UTF-8", MODE = "test" }
  kubernetes = {
    runtime_class_name = "gvisor"
    node_selector      = { "cubicle.dev/desktops" = "true" }
    tolerations = [
      { key = "cubicle.dev/desktops", effect = "NoSchedule" },
      { key = "zone", operator = "Exists", effect = "NoExecute", toleration_seconds = 30 },
    ]
  }
  recording     = { video = false, quality = "low" }
  profile_paths = [".config/chromium", "Downloads"]
}

data "cubicle_pool" "full" {
  name = cubicle_pool.full.name
}
`
	plain := providerBlock(live.Endpoint, live.AdminKey) + `
resource "cubicle_pool" "full" {
  name        = "tf-acc-full"
  image       = "ghcr.io/acme/desktop:1"
  backend     = "kubernetes"
  autoscaling = { min = 0, initial = 0, max = 3 }
}
`
	addr := "cubicle_pool.full"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: accProviders,
		Steps: []resource.TestStep{
			{
				Config: full,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("cpu"), knownvalue.Float64Exact(0.5)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("idle_timeout_seconds"), knownvalue.Int64Exact(120)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("kubernetes").AtMapKey("tolerations").AtSliceIndex(0).AtMapKey("operator"), knownvalue.StringExact("Equal")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("kubernetes").AtMapKey("tolerations").AtSliceIndex(1).AtMapKey("toleration_seconds"), knownvalue.Int64Exact(30)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("kubernetes").AtMapKey("node_selector").AtMapKey("cubicle.dev/desktops"), knownvalue.StringExact("true")),
					// fps left out takes the contract's default (5), in the plan and in the API.
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("recording"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"video": knownvalue.Bool(false), "fps": knownvalue.Int64Exact(5), "quality": knownvalue.StringExact("low"),
					})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("profile_paths"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact(".config/chromium"), knownvalue.StringExact("Downloads"),
					})),
					statecheck.ExpectKnownValue("data.cubicle_pool.full", tfjsonpath.New("recording").AtMapKey("estimate").AtMapKey("mb_per_min"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue("data.cubicle_pool.full", tfjsonpath.New("profile_paths").AtSliceIndex(1), knownvalue.StringExact("Downloads")),
				},
			},
			{ResourceName: addr, ImportState: true, ImportStateId: "tf-acc-full", ImportStateVerify: true,
				ImportStateVerifyIdentifierAttribute: "name", ImportStateVerifyIgnore: []string{"counts"}},
			{
				Config: plain,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("kubernetes"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("idle_timeout_seconds"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("cpu"), knownvalue.Float64Exact(1)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("env"), knownvalue.MapExact(map[string]knownvalue.Check{})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("recording"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("profile_paths"), knownvalue.Null()),
				},
			},
		},
	})
}

// TestAccPoolCreateRefusesAnExistingName: a pool made outside Terraform is not silently taken
// over by create; the error says how to import it.
func TestAccPoolCreateRefusesAnExistingName(t *testing.T) {
	live := accPreCheck(t)
	api := apiClient(t, live.Endpoint, live.AdminKey)
	spec := client.PoolSpec{Image: "local", Backend: "local", CPU: 1, MemoryMB: 2048,
		Autoscaling: client.Autoscaling{Max: 1}, ClaimTTLSeconds: 900, MaxClaimLifetimeSeconds: 86400, Env: map[string]string{}}
	if _, err := api.ApplyPool(context.Background(), "tf-acc-existing", spec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = api.DeletePool(context.Background(), "tf-acc-existing") })
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: accProviders,
		Steps: []resource.TestStep{{
			Config:      providerBlock(live.Endpoint, live.AdminKey) + "resource \"cubicle_pool\" \"p\" {\n  name  = \"tf-acc-existing\"\n  image = \"local\"\n}\n",
			ExpectError: regexp.MustCompile(`(?s)Pool already exists.*tofu import`),
		}},
	})
}
