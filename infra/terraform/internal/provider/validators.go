package provider

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// multipleOfValidator mirrors zod's multipleOf: the API stores CPU as whole millicores.
type multipleOfValidator struct{ step float64 }

func (v multipleOfValidator) Description(context.Context) string {
	return fmt.Sprintf("value must be a multiple of %g", v.step)
}
func (v multipleOfValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v multipleOfValidator) ValidateFloat64(_ context.Context, req validator.Float64Request, resp *validator.Float64Response) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	x := req.ConfigValue.ValueFloat64()
	if steps := x / v.step; math.Abs(steps-math.Round(steps)) > 1e-6 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid value",
			fmt.Sprintf("%s must be a multiple of %g (whole millicores), got %g", req.Path, v.step, x))
	}
}

// durationValidator accepts a Go duration that is not negative ("90s", "10m", "0s").
type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return "value must be a duration such as 30s, 10m or 1h (0s: do not wait)"
}
func (v durationValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err != nil || d < 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%s must be a duration such as 30s, 10m or 1h, got %q", req.Path, req.ConfigValue.ValueString()))
	}
}
