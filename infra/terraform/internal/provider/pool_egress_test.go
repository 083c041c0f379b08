package provider

import (
	"context"
	"reflect"
	"testing"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
)

func egressPool() *client.Pool {
	p := fullPool()
	p.Egress = &client.EgressPolicy{
		Mode:  "allowlist",
		Allow: []string{"api.example.com:443", "*.githubusercontent.com", "203.0.113.0/24:8000-8999", "[2001:db8::/32]:443"},
		Deny:  []string{"ads.example.com"},
	}
	return p
}

// A pool's egress as the API answers it, turned into state and back into a PUT body, is the same
// policy; a pool following the installation default shows null and sends null.
func TestPoolEgressRoundTrip(t *testing.T) {
	ctx := context.Background()
	p := egressPool()
	m, diags := specModelFromPool(ctx, p)
	if diags.HasError() {
		t.Fatal(diags)
	}
	got, diags := specFromModel(ctx, m)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !reflect.DeepEqual(got.Egress, p.Egress) {
		t.Errorf("round trip changed the egress\n got %+v\nwant %+v", got.Egress, p.Egress)
	}
	if d := validatePoolSpec(ctx, m); d.HasError() {
		t.Errorf("a valid egress failed: %v", d)
	}
	plain, diags := specModelFromPool(ctx, fullPool())
	if diags.HasError() || !plain.Egress.IsNull() {
		t.Fatalf("egress must be null when the pool follows the default: %v %v", plain.Egress, diags)
	}
	if spec, _ := specFromModel(ctx, plain); spec.Egress != nil {
		t.Errorf("an unset egress must be sent as null, got %+v", spec.Egress)
	}
	// Empty lists are sent as [] (the API's answer), never null.
	p.Egress = &client.EgressPolicy{Mode: "none", Allow: []string{}, Deny: []string{}}
	m, _ = specModelFromPool(ctx, p)
	if spec, _ := specFromModel(ctx, m); spec.Egress.Allow == nil || spec.Egress.Deny == nil {
		t.Errorf("empty rule lists must be [], got %+v", spec.Egress)
	}
}

// The plan-time pattern takes the rules the API takes and refuses what it refuses.
func TestEgressRulePattern(t *testing.T) {
	for rule, ok := range map[string]bool{
		"api.example.com": true, "*.example.com:443": true, "10.0.0.0/8": true, "203.0.113.7:1-65535": true, "203.0.113.7:9000-8000": true,
		"2001:db8::/32": true, "[2001:db8::1]:443": true, "::1": true,
		"*": false, "http://example.com": false, "example.com:0": false, "10.0.0.0/33": false,
		"2001:db8::1:443:x": false, "1.2.3.999": false, "[example.com]:443": false,
	} {
		if got := egressRuleRE.MatchString(rule); got != ok {
			t.Errorf("%q: pattern says %v, want %v", rule, got, ok)
		}
	}
}
