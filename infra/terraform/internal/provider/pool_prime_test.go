package provider

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework/diag"
)

func primedPool() *client.Pool {
	p := fullPool()
	p.Prime = &client.PoolPrime{
		Apps: []client.PrimeApp{
			{App: "browser", URL: ptr("https://shop.example.com/checkout"),
				WaitFor: &client.PrimeWait{Kind: "window_title", Contains: ptr("Checkout")}},
			{App: "office.writer", WaitFor: &client.PrimeWait{Kind: "element", Name: ptr("Save"), Role: ptr("push_button")}},
			{App: "terminal", WaitFor: &client.PrimeWait{Kind: "delay", MS: ptr(int64(500))}},
			{App: "files"},
		},
		TimeoutSeconds: 90,
	}
	return p
}

// A primed pool as the API answers it, turned into state and back into a PUT body, is the same
// prime: a refresh followed by an apply changes nothing; a pool without one shows null.
func TestPoolPrimeRoundTrip(t *testing.T) {
	ctx := context.Background()
	p := primedPool()
	m, diags := specModelFromPool(ctx, p)
	if diags.HasError() {
		t.Fatal(diags)
	}
	got, diags := specFromModel(ctx, m)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !reflect.DeepEqual(got.Prime, p.Prime) {
		t.Errorf("round trip changed the prime\n got %+v\nwant %+v", got.Prime, p.Prime)
	}
	if d := validatePoolSpec(ctx, m); d.HasError() {
		t.Errorf("a valid prime failed: %v", d)
	}

	plain, diags := specModelFromPool(ctx, fullPool())
	if diags.HasError() || !plain.Prime.IsNull() {
		t.Fatalf("prime must be null when the API has none: %v %v", plain.Prime, diags)
	}
	if spec, _ := specFromModel(ctx, plain); spec.Prime != nil {
		t.Errorf("an unset prime must be sent as null, got %+v", spec.Prime)
	}
}

// What the contract refuses across fields fails at plan, naming the attribute.
func TestValidatePrimeSaysWhatIsWrong(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		edit func(*client.PoolPrime)
		path string
		want string
	}{
		{func(p *client.PoolPrime) { p.Apps[1].URL = ptr("https://example.com/") }, "prime.apps[1].url", "browser app"},
		{func(p *client.PoolPrime) { p.Apps[3].App = "browser" }, "prime.apps[3].app", "appears twice"},
		{func(p *client.PoolPrime) { p.Apps[0].WaitFor.Contains = nil }, "prime.apps[0].wait_for.contains", "needs `contains`"},
		{func(p *client.PoolPrime) { p.Apps[2].WaitFor.Name = ptr("x") }, "prime.apps[2].wait_for.name", "takes `ms`"},
		{func(p *client.PoolPrime) { p.Apps[0].WaitFor.Role = ptr("link") }, "prime.apps[0].wait_for.role", "element"},
	}
	for _, c := range cases {
		p := primedPool()
		c.edit(p.Prime)
		m, diags := specModelFromPool(ctx, p)
		if diags.HasError() {
			t.Fatal(diags)
		}
		d := validatePoolSpec(ctx, m)
		if !d.HasError() {
			t.Errorf("%s: passed, want an error with %q", c.path, c.want)
			continue
		}
		e := d.Errors()[0]
		withPath, _ := e.(diag.DiagnosticWithPath)
		if withPath == nil || withPath.Path().String() != c.path || !strings.Contains(e.Detail(), c.want) {
			t.Errorf("%s: got %q (%v), want %q", c.path, e.Detail(), e, c.want)
		}
	}
}
