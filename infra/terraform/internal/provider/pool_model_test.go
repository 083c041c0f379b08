package provider

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func ptr[T any](v T) *T { return &v }

// A pool with every field of the spec set, as the API answers it.
func fullPool() *client.Pool {
	return &client.Pool{
		ID: "pool_01m8r01w2az0e7etgysj469kea", Name: "gpu", Image: "ghcr.io/acme/desktop:2", Backend: "kubernetes",
		CPU: 1.5, MemoryMB: 4096, Autoscaling: client.Autoscaling{Min: 1, Initial: 2, Max: 8},
		ClaimTTLSeconds: 600, MaxClaimLifetimeSeconds: 7200, IdleTimeoutSeconds: ptr(int64(120)),
		IdlePauseSeconds: ptr(int64(300)),
		Env:              map[string]string{"LANG": "C.UTF-8"},
		Kubernetes: &client.PoolKubernetes{
			RuntimeClassName: ptr("gvisor"),
			NodeSelector:     map[string]string{"pool": "desktops"},
			Tolerations: []client.PoolToleration{
				{Key: ptr("gpu"), Operator: "Exists", Effect: ptr("NoSchedule")},
				{Key: ptr("zone"), Operator: "Equal", Value: ptr("a"), Effect: ptr("NoExecute"), TolerationSeconds: ptr(int64(30))},
			},
		},
		Recording: &client.PoolRecordingView{Video: true, FPS: 10, Quality: "high",
			Estimate: client.RecordingEstimate{CPUPctOneCore: 31.5, MBPerMin: 4.2}},
		ProfilePaths: []string{".config/chromium", "Documents"},
		State:        "active", Generation: 3,
		Counts:    client.PoolCounts{Provisioning: 1, Warm: 2, Claimed: 3},
		CreatedAt: "2026-12-01T00:00:00.000Z", UpdatedAt: "2026-12-01T00:01:00.000Z",
	}
}

func specOf(p *client.Pool) client.PoolSpec {
	return client.PoolSpec{
		Image: p.Image, Backend: p.Backend, CPU: p.CPU, MemoryMB: p.MemoryMB, Autoscaling: p.Autoscaling,
		ClaimTTLSeconds: p.ClaimTTLSeconds, MaxClaimLifetimeSeconds: p.MaxClaimLifetimeSeconds,
		IdleTimeoutSeconds: p.IdleTimeoutSeconds, IdlePauseSeconds: p.IdlePauseSeconds,
		Env: p.Env, Kubernetes: p.Kubernetes, Recording: recordingSpecOf(p.Recording), ProfilePaths: p.ProfilePaths,
	}
}

// recordingSpecOf is what a pool's recording view sends back: its settings, not its estimate.
func recordingSpecOf(r *client.PoolRecordingView) *client.PoolRecording {
	if r == nil {
		return nil
	}
	return &client.PoolRecording{Video: r.Video, FPS: r.FPS, Quality: r.Quality}
}

// What the API answers, turned into state and back into a PUT body, is the same spec: a refresh
// followed by an apply changes nothing.
func TestPoolSpecRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, p := range []*client.Pool{fullPool(), {Name: "plain", Image: "local", Backend: "local", CPU: 1, MemoryMB: 2048,
		Autoscaling: client.Autoscaling{Max: 1}, ClaimTTLSeconds: 900, MaxClaimLifetimeSeconds: 86400}} {
		m, diags := specModelFromPool(ctx, p)
		if diags.HasError() {
			t.Fatalf("%s: specModelFromPool: %v", p.Name, diags)
		}
		got, diags := specFromModel(ctx, m)
		if diags.HasError() {
			t.Fatalf("%s: specFromModel: %v", p.Name, diags)
		}
		want := specOf(p)
		if want.Env == nil {
			want.Env = map[string]string{} // the provider always sends env
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: round trip changed the spec\n got %+v\nwant %+v", p.Name, got, want)
		}
	}
}

func TestPoolStateShowsCountsAndNullsWhereTheAPIHasNone(t *testing.T) {
	ctx := context.Background()
	p := fullPool()
	p.Kubernetes, p.IdleTimeoutSeconds, p.Env, p.Recording, p.ProfilePaths = nil, nil, nil, nil, nil
	m, diags := specModelFromPool(ctx, p)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !m.Kubernetes.IsNull() || !m.IdleTimeoutSeconds.IsNull() || !m.Recording.IsNull() || !m.ProfilePaths.IsNull() {
		t.Errorf("kubernetes, idle_timeout_seconds, recording and profile_paths must be null when the API has none: %v %v %v %v",
			m.Kubernetes, m.IdleTimeoutSeconds, m.Recording, m.ProfilePaths)
	}
	// …and null is sent back as null (JSON null: the API's default), not as an empty value.
	spec, diags := specFromModel(ctx, m)
	if diags.HasError() {
		t.Fatal(diags)
	}
	body, _ := json.Marshal(spec)
	for _, want := range []string{`"recording":null`, `"profile_paths":null`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("PUT body lacks %s: %s", want, body)
		}
	}
	if m.Env.IsNull() || len(m.Env.Elements()) != 0 {
		t.Errorf("env must be an empty map (the schema default), got %v", m.Env)
	}
	s, diags := statusModelFromPool(p)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if got := s.Counts.Attributes()["claimed"].(types.Int64).ValueInt64(); got != 3 {
		t.Errorf("counts.claimed = %d, want 3", got)
	}
	if s.Generation.ValueInt64() != 3 || s.ID.ValueString() != p.ID {
		t.Errorf("status = %+v", s)
	}
}

// The API stores whole millicores; 0.1 + 0.2 style float noise must not become a diff.
func TestRoundCPU(t *testing.T) {
	for in, want := range map[float64]float64{0.30000000000000004: 0.3, 1.5: 1.5, 0.001: 0.001, 63.9999999: 64} {
		if got := roundCPU(in); got != want {
			t.Errorf("roundCPU(%v) = %v, want %v", in, got, want)
		}
	}
}

func TestValidatePoolSpecJoinsFields(t *testing.T) {
	ctx := context.Background()
	base, _ := specModelFromPool(ctx, fullPool())

	bad := base
	bad.Autoscaling = types.ObjectValueMust(autoscalingAttrTypes, map[string]attr.Value{
		"min": types.Int64Value(3), "initial": types.Int64Value(2), "max": types.Int64Value(5),
	})
	if d := validatePoolSpec(ctx, bad); !d.HasError() || !strings.Contains(d.Errors()[0].Detail(), "min ≤ initial ≤ max") {
		t.Errorf("min > initial passed: %v", d)
	}

	// claim_ttl_seconds above the default lifetime (86400) fails even with lifetime unset.
	bad = base
	bad.ClaimTTLSeconds, bad.MaxClaimLifetimeSeconds = types.Int64Value(90000), types.Int64Null()
	if d := validatePoolSpec(ctx, bad); !d.HasError() || !strings.Contains(d.Errors()[0].Detail(), "must not exceed") {
		t.Errorf("ttl > default lifetime passed: %v", d)
	}

	if d := validatePoolSpec(ctx, base); d.HasError() {
		t.Errorf("a valid spec failed: %v", d)
	}
}

func TestMultipleOfAndDurationValidators(t *testing.T) {
	ctx := context.Background()
	for x, ok := range map[float64]bool{1: true, 0.25: true, 0.001: true, 2.5005: false, 0.0001: false} {
		resp := &validator.Float64Response{}
		multipleOfValidator{step: 0.001}.ValidateFloat64(ctx, validator.Float64Request{Path: path.Root("cpu"), ConfigValue: types.Float64Value(x)}, resp)
		if resp.Diagnostics.HasError() == ok {
			t.Errorf("cpu %v: error = %v, want ok = %v", x, resp.Diagnostics.HasError(), ok)
		}
	}
	for s, ok := range map[string]bool{"10m": true, "0s": true, "90s": true, "soon": false, "-1m": false} {
		resp := &validator.StringResponse{}
		durationValidator{}.ValidateString(ctx, validator.StringRequest{Path: path.Root("drain_timeout"), ConfigValue: types.StringValue(s)}, resp)
		if resp.Diagnostics.HasError() == ok {
			t.Errorf("drain_timeout %q: error = %v, want ok = %v", s, resp.Diagnostics.HasError(), ok)
		}
	}
}

func TestExplainAPIErrorSaysWhatIsWrong(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&client.TransportError{Method: "GET", URL: "http://x/v1/tenant", Err: errors.New("connection refused")}, "Cannot reach the Cubicle API"},
		{&client.APIError{Status: 401, Body: client.ErrorBody{Code: "unauthenticated"}}, "401 unauthenticated"},
		{&client.APIError{Status: 403, Body: client.ErrorBody{Code: "forbidden"}}, "403 forbidden"},
		{&client.APIError{Status: 404, Body: client.ErrorBody{Code: "not_found"}}, "Not found in this tenant"},
		{&client.APIError{Status: 400, Body: client.ErrorBody{Code: "validation_failed"}}, "refused the request"},
	}
	for _, c := range cases {
		summary, detail := explainAPIError("http://x", "do it", c.err)
		if !strings.Contains(summary, c.want) || !strings.Contains(detail, "do it") {
			t.Errorf("%v: summary %q, detail %q; want %q in the summary", c.err, summary, detail, c.want)
		}
	}
}
