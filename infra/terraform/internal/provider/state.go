package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// tfState lets one helper write the state of Create and Update responses alike.
type tfState struct {
	diags *diag.Diagnostics
	set   func(ctx context.Context, v any)
}
