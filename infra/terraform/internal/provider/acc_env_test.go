package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The acceptance tests run OpenTofu against a live Cubicle that the caller started with
// test/harness/live-cubicle.mjs (scripts/lib/go-tests.mjs does both): its JSON arrives as the
// CUBICLE_TEST_* variables below. No registry is contacted: the provider is served in-process
// and the CLI configuration written here allows only an empty filesystem mirror.

// liveCubicle is the stack the acceptance tests run against.
type liveCubicle struct {
	Endpoint, AdminKey, MemberKey, RevokedKey, OtherTenantKey, OtherPool string
}

var accProviders = map[string]func() (tfprotov6.ProviderServer, error){
	"cubicle": providerserver.NewProtocol6WithError(New("test")()),
}

// accPreCheck skips without TF_ACC (resource.Test would too) and fails, saying how to run them,
// when TF_ACC is set without a live Cubicle or a tofu binary.
func accPreCheck(t *testing.T) liveCubicle {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (node scripts/cubicle.mjs test-go runs them against a live Cubicle)")
	}
	live := liveCubicle{
		Endpoint:       os.Getenv("CUBICLE_TEST_ENDPOINT"),
		AdminKey:       os.Getenv("CUBICLE_TEST_ADMIN_KEY"),
		MemberKey:      os.Getenv("CUBICLE_TEST_MEMBER_KEY"),
		RevokedKey:     os.Getenv("CUBICLE_TEST_REVOKED_KEY"),
		OtherTenantKey: os.Getenv("CUBICLE_TEST_OTHER_TENANT_KEY"),
		OtherPool:      os.Getenv("CUBICLE_TEST_OTHER_POOL"),
	}
	if live.Endpoint == "" || live.AdminKey == "" || live.MemberKey == "" || live.RevokedKey == "" || live.OtherTenantKey == "" || live.OtherPool == "" {
		t.Fatal("TF_ACC is set but CUBICLE_TEST_ENDPOINT/_ADMIN_KEY/_MEMBER_KEY/_REVOKED_KEY/_OTHER_TENANT_KEY/_OTHER_POOL are not: run `node scripts/cubicle.mjs test-go`, which starts a live Cubicle (test/harness/live-cubicle.mjs) and sets them")
	}
	if os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		t.Fatal("TF_ACC_TERRAFORM_PATH must name the tofu binary (node scripts/lib/tofu-tools.mjs builds it)")
	}
	offlineCLIConfig(t)
	return live
}

// offlineCLIConfig points OpenTofu at a CLI configuration whose only installation method is an
// empty filesystem mirror, under registry.opentofu.org/cubicle (set here, not inherited: the
// machine's environment may name a file that does not exist).
func offlineCLIConfig(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	mirror := filepath.Join(dir, "mirror")
	if err := os.MkdirAll(mirror, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "tofurc")
	body := fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_CLI_CONFIG_FILE", cfg)
	t.Setenv("TF_ACC_PROVIDER_HOST", "registry.opentofu.org")
	t.Setenv("TF_ACC_PROVIDER_NAMESPACE", "cubicle")
	t.Setenv("CHECKPOINT_DISABLE", "1")
	t.Setenv("CUBICLE_URL", "")
	t.Setenv("CUBICLE_ENDPOINT", "")
	t.Setenv("CUBICLE_API_KEY", "")
}

// providerBlock configures the provider with one key of the live Cubicle.
func providerBlock(endpoint, key string) string {
	return requiredProviders + fmt.Sprintf("provider \"cubicle\" {\n  endpoint = %q\n  api_key  = %q\n}\n", endpoint, key)
}

// requiredProviders names the provider's address as users write it; the test serves it in-process.
const requiredProviders = `terraform {
  required_providers {
    cubicle = {
      source = "registry.opentofu.org/cubicle/cubicle"
    }
  }
}
`

func apiClient(t *testing.T, endpoint, key string) *client.Client {
	t.Helper()
	c, err := client.New(endpoint, key, "acceptance-test")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// claimPool takes a claim on a pool the way an agent would (POST /v1/pools/{name}/claims),
// waiting for a sandbox. The provider has no claim calls, so the test makes this one itself.
func claimPool(t *testing.T, endpoint, key, pool string, ttlSeconds int) client.Claim {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"ttl_seconds": ttlSeconds, "wait_seconds": 120})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost,
		strings.TrimRight(endpoint, "/")+"/v1/pools/"+pool+"/claims", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("claim %s: %v", pool, err)
	}
	defer res.Body.Close()
	var c client.Claim
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("claim %s: status %d (want 201, an active claim), decode error %v", pool, res.StatusCode, err)
	}
	return c
}

// getClaim reads one claim (GET /v1/claims/{id}).
func getClaim(t *testing.T, endpoint, key, id string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, strings.TrimRight(endpoint, "/")+"/v1/claims/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("get claim %s: %v", id, err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("get claim %s: status %d, %v", id, res.StatusCode, err)
	}
	return out
}

// releaseClaim ends a claim (DELETE /v1/claims/{id}), freeing its desktop.
func releaseClaim(endpoint, key, id string) error {
	if id == "" {
		return nil
	}
	req, _ := http.NewRequest(http.MethodDelete, strings.TrimRight(endpoint, "/")+"/v1/claims/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode >= 300 {
		return fmt.Errorf("release claim %s: status %d", id, res.StatusCode)
	}
	return nil
}
