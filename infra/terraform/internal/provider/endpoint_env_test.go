package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

func TestEndpointFromEnvPrefersCubicleURL(t *testing.T) {
	t.Setenv("CUBICLE_URL", "http://new.example")
	t.Setenv("CUBICLE_ENDPOINT", "http://old.example")
	var diags diag.Diagnostics
	if got := endpointFromEnv(&diags); got != "http://new.example" || diags.WarningsCount() != 0 {
		t.Fatalf("got %q with %d warnings, want CUBICLE_URL and none", got, diags.WarningsCount())
	}
}

func TestEndpointFromEnvFallsBackToTheDeprecatedNameWithAWarning(t *testing.T) {
	t.Setenv("CUBICLE_URL", "")
	t.Setenv("CUBICLE_ENDPOINT", "http://old.example")
	var diags diag.Diagnostics
	if got := endpointFromEnv(&diags); got != "http://old.example" || diags.WarningsCount() != 1 {
		t.Fatalf("got %q with %d warnings, want CUBICLE_ENDPOINT and one warning", got, diags.WarningsCount())
	}
}
