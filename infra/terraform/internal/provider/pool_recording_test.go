package provider

import (
	"context"
	"testing"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// A recording whose fps and quality are unknown (not yet defaulted) is sent with the contract's
// defaults, and the resource's state never holds the estimate (its object type has no such key).
func TestRecordingDefaultsAndResourceShape(t *testing.T) {
	ctx := context.Background()
	o := types.ObjectValueMust(recordingAttrTypes, map[string]attr.Value{
		"video": types.BoolValue(false), "fps": types.Int64Unknown(), "quality": types.StringNull(),
	})
	got, diags := recordingFromModel(ctx, o)
	if diags.HasError() {
		t.Fatal(diags)
	}
	want := client.PoolRecording{Video: false, FPS: 5, Quality: "medium"}
	if got == nil || *got != want {
		t.Errorf("recording = %+v, want %+v", got, want)
	}
	m, _ := specModelFromPool(ctx, fullPool())
	if _, has := m.Recording.Attributes()["estimate"]; has {
		t.Error("the resource's recording must not carry the estimate")
	}
}

// The data sources show the estimate the API measured.
func TestPoolDataShowsRecordingEstimate(t *testing.T) {
	ctx := context.Background()
	m, diags := poolDataFrom(ctx, fullPool())
	if diags.HasError() {
		t.Fatal(diags)
	}
	est, ok := m.Recording.Attributes()["estimate"].(types.Object)
	if !ok {
		t.Fatalf("recording.estimate missing: %v", m.Recording)
	}
	if got := est.Attributes()["mb_per_min"].(types.Float64).ValueFloat64(); got != 4.2 {
		t.Errorf("estimate.mb_per_min = %v, want 4.2", got)
	}
	if got := m.Recording.Attributes()["quality"].(types.String).ValueString(); got != "high" {
		t.Errorf("recording.quality = %q, want high", got)
	}
	p := fullPool()
	p.Recording = nil
	if m, _ := poolDataFrom(ctx, p); !m.Recording.IsNull() {
		t.Errorf("recording must be null when the pool offers none: %v", m.Recording)
	}
}

// profile_paths: what the contract's ProfilePath refinement accepts and refuses.
func TestHomeRelativePathValidator(t *testing.T) {
	ctx := context.Background()
	cases := map[string]bool{
		".config/chromium": true, "Documents": true, ".bash_history": true, "a/b c/d": true,
		"/etc/passwd": false, "../x": false, "a/../b": false, "./a": false, "a//b": false, "a/": false, "a\x00b": false,
	}
	for p, ok := range cases {
		resp := &validator.StringResponse{}
		homeRelativePathValidator{}.ValidateString(ctx, validator.StringRequest{
			Path: path.Root("profile_paths").AtListIndex(0), ConfigValue: types.StringValue(p),
		}, resp)
		if resp.Diagnostics.HasError() == ok {
			t.Errorf("%q: error = %v, want ok = %v", p, resp.Diagnostics.HasError(), ok)
		}
	}
}
