package provider

import (
	"os"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// endpointFromEnv reads the API's base URL from CUBICLE_URL, the name the SDKs and the CLI use.
// CUBICLE_ENDPOINT, the provider's former name for it, is still read when CUBICLE_URL is unset,
// with a warning: existing CI configurations keep working while they move to the one name.
func endpointFromEnv(diags *diag.Diagnostics) string {
	if url := os.Getenv("CUBICLE_URL"); url != "" {
		return url
	}
	legacy := os.Getenv("CUBICLE_ENDPOINT")
	if legacy != "" {
		diags.AddWarning("CUBICLE_ENDPOINT is deprecated",
			"Set CUBICLE_URL instead (the name the SDKs and the CLI read); CUBICLE_ENDPOINT will be removed in a later release.")
	}
	return legacy
}
