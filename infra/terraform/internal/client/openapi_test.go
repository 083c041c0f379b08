package client

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The contract's OpenAPI document, generated from the zod schemas (npm run openapi).
func loadOpenAPI(t *testing.T) map[string]any {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(here), "..", "..", "..", "..", "packages", "contract", "openapi.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return doc
}

func schemaOf(t *testing.T, doc map[string]any, name string) map[string]any {
	t.Helper()
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	s, ok := schemas[name].(map[string]any)
	if !ok {
		t.Fatalf("openapi.json has no schema %s", name)
	}
	return s
}

// at follows a path of keys through the document, resolving $ref and the non-null branch of anyOf.
func at(t *testing.T, doc map[string]any, schema string, keys ...string) any {
	t.Helper()
	var cur any = schemaOf(t, doc, schema)
	for _, k := range keys {
		// A key beside a $ref (a default) is read before following the reference.
		if m, ok := cur.(map[string]any); ok {
			if v, ok := m[k]; ok {
				cur = v
				continue
			}
		}
		cur = resolve(t, doc, cur)
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%s/%s: not an object at %q", schema, strings.Join(keys, "/"), k)
		}
		cur, ok = m[k]
		if !ok {
			t.Fatalf("%s/%s: no %q in the document", schema, strings.Join(keys, "/"), k)
		}
	}
	return cur
}

func resolve(t *testing.T, doc map[string]any, v any) any {
	for {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		if ref, ok := m["$ref"].(string); ok {
			v = schemaOf(t, doc, strings.TrimPrefix(ref, "#/components/schemas/"))
			continue
		}
		if anyOf, ok := m["anyOf"].([]any); ok {
			for _, branch := range anyOf {
				if b, ok := branch.(map[string]any); ok && b["type"] != "null" {
					v = branch
					break
				}
			}
			if _, still := v.(map[string]any)["anyOf"]; still {
				return v
			}
			continue
		}
		return v
	}
}

// jsonFields lists a struct's JSON field names (embedded structs flattened) and whether each
// is always present (no omitempty).
func jsonFields(typ reflect.Type) map[string]bool {
	fields := map[string]bool{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if f.Anonymous {
			for k, v := range jsonFields(f.Type) {
				fields[k] = v
			}
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		fields[name] = !strings.Contains(opts, "omitempty")
	}
	return fields
}

func keys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestModelsMatchOpenAPI fails when a model of models.go no longer matches its schema in
// packages/contract/openapi.json: a property added, removed or renamed, or a change of which
// fields are required.
func TestModelsMatchOpenAPI(t *testing.T) {
	doc := loadOpenAPI(t)
	cases := []struct {
		schema string
		model  any
		// partial: the model reads only some of the schema's properties (each must exist).
		partial bool
		// request: the provider sends it; required properties must be sent, the rest may be.
		request bool
	}{
		{schema: "PoolSpec", model: PoolSpec{}, request: true},
		{schema: "Pool", model: Pool{}},
		{schema: "Autoscaling", model: Autoscaling{}},
		{schema: "PoolKubernetes", model: PoolKubernetes{}},
		{schema: "PoolToleration", model: PoolToleration{}},
		{schema: "PoolCounts", model: PoolCounts{}},
		{schema: "Tenant", model: Tenant{}},
		{schema: "UpdateTenantRequest", model: UpdateTenantRequest{}, request: true},
		{schema: "ApiKey", model: APIKey{}},
		{schema: "ApiKeyCreated", model: APIKeyCreated{}},
		{schema: "CreateApiKeyRequest", model: CreateAPIKeyRequest{}, request: true},
		{schema: "ErrorBody", model: ErrorBody{}},
		{schema: "Claim", model: Claim{}, partial: true},
		{schema: "PoolPrime", model: PoolPrime{}},
		{schema: "EgressPolicy", model: EgressPolicy{}},
		{schema: "EgressPolicyInput", model: EgressPolicy{}, request: true},
		{schema: "PoolPrimeInput", model: PoolPrime{}, request: true},
		{schema: "PrimeApp", model: PrimeApp{}, request: true},
		{schema: "PoolRecording", model: PoolRecording{}, request: true},
		{schema: "PoolRecordingView", model: PoolRecordingView{}},
		{schema: "RecordingEstimate", model: RecordingEstimate{}},
		// PrimeWait is a oneOf by kind (TestPrimeWaitMatchesOpenAPI checks its branches).
	}
	for _, tc := range cases {
		t.Run(tc.schema, func(t *testing.T) {
			s := schemaOf(t, doc, tc.schema)
			props, _ := s["properties"].(map[string]any)
			required := map[string]bool{}
			for _, r := range asSlice(s["required"]) {
				required[r.(string)] = true
			}
			fields := jsonFields(reflect.TypeOf(tc.model))
			for name := range fields {
				if _, ok := props[name]; !ok {
					t.Errorf("%T has field %q, which %s does not define", tc.model, name, tc.schema)
				}
			}
			if !tc.partial {
				for name := range props {
					if _, ok := fields[name]; !ok {
						t.Errorf("%s defines %q, which %T lacks (document properties: %v)", tc.schema, name, tc.model, keys(props))
					}
				}
			}
			for name, always := range fields {
				if required[name] && !always {
					t.Errorf("%s requires %q but %T omits it when empty (omitempty)", tc.schema, name, tc.model)
				}
				if !tc.request && !required[name] && always {
					t.Errorf("%T always expects %q but %s does not require it: add omitempty and a pointer", tc.model, name, tc.schema)
				}
			}
		})
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func number(t *testing.T, v any) float64 {
	t.Helper()
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("expected a number in the document, got %#v", v)
	}
	return f
}

// TestLimitsMatchOpenAPI fails when a limit the provider validates at plan time differs from the
// contract's.
func TestLimitsMatchOpenAPI(t *testing.T) {
	doc := loadOpenAPI(t)
	nums := []struct {
		got  float64
		path []string
	}{
		{ImageMaxLength, []string{"PoolSpec", "properties", "image", "maxLength"}},
		{CPUMax, []string{"PoolSpec", "properties", "cpu", "maximum"}},
		{CPUStep, []string{"PoolSpec", "properties", "cpu", "multipleOf"}},
		{0, []string{"PoolSpec", "properties", "cpu", "exclusiveMinimum"}},
		{MemoryMBMin, []string{"PoolSpec", "properties", "memory_mb", "minimum"}},
		{MemoryMBMax, []string{"PoolSpec", "properties", "memory_mb", "maximum"}},
		{0, []string{"Autoscaling", "properties", "min", "minimum"}},
		{AutoscalingSizeMax, []string{"Autoscaling", "properties", "min", "maximum"}},
		{0, []string{"Autoscaling", "properties", "initial", "minimum"}},
		{AutoscalingSizeMax, []string{"Autoscaling", "properties", "initial", "maximum"}},
		{AutoscalingMaxMin, []string{"Autoscaling", "properties", "max", "minimum"}},
		{AutoscalingSizeMax, []string{"Autoscaling", "properties", "max", "maximum"}},
		{1, []string{"PoolSpec", "properties", "claim_ttl_seconds", "minimum"}},
		{ClaimTTLSecondsMax, []string{"PoolSpec", "properties", "claim_ttl_seconds", "maximum"}},
		{1, []string{"PoolSpec", "properties", "max_claim_lifetime_seconds", "minimum"}},
		{MaxClaimLifetimeSecondsMx, []string{"PoolSpec", "properties", "max_claim_lifetime_seconds", "maximum"}},
		{1, []string{"PoolSpec", "properties", "idle_timeout_seconds", "minimum"}},
		{IdleTimeoutSecondsMax, []string{"PoolSpec", "properties", "idle_timeout_seconds", "maximum"}},
		{1, []string{"PoolSpec", "properties", "idle_pause_seconds", "minimum"}},
		{IdlePauseSecondsMax, []string{"PoolSpec", "properties", "idle_pause_seconds", "maximum"}},
		{EnvValueMaxLength, []string{"PoolEnv", "additionalProperties", "maxLength"}},
		{TolerationsMax, []string{"PoolKubernetes", "properties", "tolerations", "maxItems"}},
		{RuntimeClassNameMaxLen, []string{"PoolKubernetes", "properties", "runtime_class_name", "maxLength"}},
		{LabelKeyMaxLength, []string{"PoolKubernetes", "properties", "node_selector", "propertyNames", "maxLength"}},
		{EmbedOriginsMax, []string{"UpdateTenantRequest", "properties", "embed_origins", "maxItems"}},
		{EmbedOriginMaxLength, []string{"EmbedOrigin", "maxLength"}},
		{ResourceNameMaxLength, []string{"ResourceName", "maxLength"}},
		{APIKeyNameMaxLength, []string{"CreateApiKeyRequest", "properties", "name", "maxLength"}},
		{PrimeAppsMax, []string{"PoolPrimeInput", "properties", "apps", "maxItems"}},
		{1, []string{"PoolPrimeInput", "properties", "apps", "minItems"}},
		{PrimeTimeoutSecondsMax, []string{"PoolPrimeInput", "properties", "timeout_seconds", "maximum"}},
		{DefaultPrimeTimeoutSeconds, []string{"PoolPrimeInput", "properties", "timeout_seconds", "default"}},
		{PrimeURLMaxLength, []string{"PrimeApp", "properties", "url", "maxLength"}},
		{EgressRulesMax, []string{"EgressPolicy", "properties", "allow", "maxItems"}},
		{EgressRulesMax, []string{"EgressPolicy", "properties", "deny", "maxItems"}},
		{EgressRuleMaxLength, []string{"EgressRule", "maxLength"}},
		{RecordingFPSMin, []string{"PoolRecording", "properties", "fps", "minimum"}},
		{RecordingFPSMax, []string{"PoolRecording", "properties", "fps", "maximum"}},
		{RecordingFPSMin, []string{"PoolRecordingView", "properties", "fps", "minimum"}},
		{RecordingFPSMax, []string{"PoolRecordingView", "properties", "fps", "maximum"}},
		{DefaultRecordingFPS, []string{"PoolRecording", "properties", "fps", "default"}},
		{ProfilePathsMin, []string{"PoolSpec", "properties", "profile_paths", "minItems"}},
		{ProfilePathsMax, []string{"PoolSpec", "properties", "profile_paths", "maxItems"}},
		{1, []string{"ProfilePath", "minLength"}},
		{ProfilePathMaxLength, []string{"ProfilePath", "maxLength"}},
		// Defaults.
		{DefaultCPU, []string{"PoolSpec", "properties", "cpu", "default"}},
		{DefaultMemoryMB, []string{"PoolSpec", "properties", "memory_mb", "default"}},
		{DefaultAutoscalingMin, []string{"PoolSpec", "properties", "autoscaling", "default", "min"}},
		{DefaultAutoscalingInitial, []string{"PoolSpec", "properties", "autoscaling", "default", "initial"}},
		{DefaultAutoscalingMax, []string{"PoolSpec", "properties", "autoscaling", "default", "max"}},
		{DefaultClaimTTLSeconds, []string{"PoolSpec", "properties", "claim_ttl_seconds", "default"}},
		{DefaultMaxClaimLifetimeSeconds, []string{"PoolSpec", "properties", "max_claim_lifetime_seconds", "default"}},
	}
	for _, n := range nums {
		if want := number(t, at(t, doc, n.path[0], n.path[1:]...)); want != n.got {
			t.Errorf("%s: the contract says %v, the provider %v", strings.Join(n.path, "/"), want, n.got)
		}
	}
	strs := []struct {
		got  string
		path []string
	}{
		{DefaultBackend, []string{"PoolSpec", "properties", "backend", "default"}},
		{DefaultTolerationOperator, []string{"PoolToleration", "properties", "operator", "default"}},
		{DefaultAPIKeyRole, []string{"CreateApiKeyRequest", "properties", "role", "default"}},
		{ResourceNamePattern, []string{"ResourceName", "pattern"}},
		{EnvNamePattern, []string{"PoolEnv", "propertyNames", "pattern"}},
		{RuntimeClassNamePattern, []string{"PoolKubernetes", "properties", "runtime_class_name", "pattern"}},
		{LabelKeyPattern, []string{"PoolKubernetes", "properties", "node_selector", "propertyNames", "pattern"}},
		{LabelValuePattern, []string{"PoolKubernetes", "properties", "node_selector", "additionalProperties", "pattern"}},
		{EmbedOriginPattern, []string{"EmbedOrigin", "pattern"}},
		{EgressRulePattern, []string{"EgressRule", "pattern"}},
		{DefaultRecordingQuality, []string{"PoolRecording", "properties", "quality", "default"}},
	}
	for _, s := range strs {
		if want, _ := at(t, doc, s.path[0], s.path[1:]...).(string); want != s.got {
			t.Errorf("%s: the contract says %q, the provider %q", strings.Join(s.path, "/"), want, s.got)
		}
	}
	enums := []struct {
		got    []string
		schema string
		path   []string
	}{
		{Backends, "Backend", nil},
		{APIKeyRoles, "ApiKeyRole", nil},
		{TolerationOperators, "PoolToleration", []string{"properties", "operator"}},
		{TolerationEffects, "PoolToleration", []string{"properties", "effect"}},
		{PrimeApps, "GuestLaunchApp", nil},
		{EgressModes, "EgressMode", nil},
		{RecordingQualities, "RecordingQuality", nil},
	}
	for _, e := range enums {
		var want []string
		for _, v := range asSlice(resolve(t, doc, at(t, doc, e.schema, e.path...)).(map[string]any)["enum"]) {
			want = append(want, v.(string))
		}
		if !slices.Equal(want, e.got) {
			t.Errorf("%s %v enum: the contract says %v, the provider %v", e.schema, e.path, want, e.got)
		}
	}
}

// TestPrimeWaitMatchesOpenAPI checks PrimeWait against the contract's branches: each kind, the
// fields it takes (all in the model), the limits the provider validates at plan time.
func TestPrimeWaitMatchesOpenAPI(t *testing.T) {
	doc := loadOpenAPI(t)
	fields := jsonFields(reflect.TypeOf(PrimeWait{}))
	var kinds []string
	for _, branch := range asSlice(schemaOf(t, doc, "PrimeWait")["oneOf"]) {
		props := branch.(map[string]any)["properties"].(map[string]any)
		kind := props["kind"].(map[string]any)["const"].(string)
		kinds = append(kinds, kind)
		for name, p := range props {
			if _, ok := fields[name]; !ok {
				t.Errorf("PrimeWait branch %s has %q, which PrimeWait lacks", kind, name)
			}
			limits := map[string]float64{"contains": PrimeWaitTextMaxLength, "name": PrimeWaitTextMaxLength, "ms": PrimeDelayMSMax}
			if want, ok := limits[name]; ok {
				key := "maxLength"
				if name == "ms" {
					key = "maximum"
				}
				if got := number(t, p.(map[string]any)[key]); got != want {
					t.Errorf("PrimeWait %s.%s %s: the contract says %v, the provider %v", kind, name, key, got, want)
				}
			}
		}
	}
	if !slices.Equal(kinds, PrimeWaitKinds) {
		t.Errorf("PrimeWait kinds: the contract says %v, the provider %v", kinds, PrimeWaitKinds)
	}
}
