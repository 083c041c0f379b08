package client

// The API's shapes, field for field as packages/contract/openapi.json names them. The JSON tags
// are checked against that document by openapi_test.go: a field added, renamed or made required
// there without a change here fails the test. A tag without omitempty is a field the API always
// sends (response types) or one the provider always sends (request types).

// Autoscaling is the warm-pool size policy: min ≤ initial ≤ max.
type Autoscaling struct {
	Min     int64 `json:"min"`
	Initial int64 `json:"initial"`
	Max     int64 `json:"max"`
}

// PoolToleration is one Pod toleration (Kubernetes' fields in snake_case).
type PoolToleration struct {
	Key               *string `json:"key,omitempty"`
	Operator          string  `json:"operator"`
	Value             *string `json:"value,omitempty"`
	Effect            *string `json:"effect,omitempty"`
	TolerationSeconds *int64  `json:"toleration_seconds,omitempty"`
}

// PoolKubernetes places a pool's sandboxes on the kubernetes and kubevirt backends.
type PoolKubernetes struct {
	RuntimeClassName *string           `json:"runtime_class_name,omitempty"`
	NodeSelector     map[string]string `json:"node_selector,omitempty"`
	Tolerations      []PoolToleration  `json:"tolerations,omitempty"`
}

// PrimeWait is what "ready" means for one primed app: the contract's PrimeWait is one branch per
// kind (`window_title` with contains, `element` with name and role, `delay` with ms).
type PrimeWait struct {
	Kind     string  `json:"kind"`
	Contains *string `json:"contains,omitempty"`
	Name     *string `json:"name,omitempty"`
	Role     *string `json:"role,omitempty"`
	MS       *int64  `json:"ms,omitempty"`
}

// PrimeApp is one app every warm desktop has open before a claim takes it.
type PrimeApp struct {
	App     string     `json:"app"`
	URL     *string    `json:"url,omitempty"`
	WaitFor *PrimeWait `json:"wait_for,omitempty"`
}

// PoolPrime is a pool's prime: its apps and the whole priming's timeout. Restore is reserved by
// the API for restoring a profile or snapshot (not available yet): always null.
type PoolPrime struct {
	Apps           []PrimeApp `json:"apps"`
	TimeoutSeconds int64      `json:"timeout_seconds"`
	Restore        any        `json:"restore"`
}

// EgressPolicy is a pool's egress: a mode and its allow and deny rules (EgressRulePattern).
type EgressPolicy struct {
	Mode  string   `json:"mode"`
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

// PoolRecording is a pool's recording as the provider sends it: `video` true records every claim,
// false only claims that ask. The provider always sends fps and quality (the plan holds defaults).
type PoolRecording struct {
	Video   bool   `json:"video"`
	FPS     int64  `json:"fps"`
	Quality string `json:"quality"`
}

// RecordingEstimate is the measured cost of one recorded desktop at a pool's settings.
type RecordingEstimate struct {
	CPUPctOneCore float64 `json:"cpu_pct_one_core"`
	MBPerMin      float64 `json:"mb_per_min"`
}

// PoolRecordingView is a pool's recording as the API shows it, with its estimated cost.
type PoolRecordingView struct {
	Video    bool              `json:"video"`
	FPS      int64             `json:"fps"`
	Quality  string            `json:"quality"`
	Estimate RecordingEstimate `json:"estimate"`
}

// PoolSpec is the body of PUT /v1/pools/{name}: the whole desired state. The provider always
// sends every field, so what the API stores is exactly what the configuration says.
type PoolSpec struct {
	Image                   string            `json:"image"`
	Backend                 string            `json:"backend"`
	CPU                     float64           `json:"cpu"`
	MemoryMB                int64             `json:"memory_mb"`
	Autoscaling             Autoscaling       `json:"autoscaling"`
	ClaimTTLSeconds         int64             `json:"claim_ttl_seconds"`
	MaxClaimLifetimeSeconds int64             `json:"max_claim_lifetime_seconds"`
	IdleTimeoutSeconds      *int64            `json:"idle_timeout_seconds"`
	IdlePauseSeconds        *int64            `json:"idle_pause_seconds"`
	Env                     map[string]string `json:"env"`
	Kubernetes              *PoolKubernetes   `json:"kubernetes"`
	Prime                   *PoolPrime        `json:"prime"`
	Egress                  *EgressPolicy     `json:"egress"`
	Recording               *PoolRecording    `json:"recording"`
	ProfilePaths            []string          `json:"profile_paths"`
}

// PoolCounts are the pool's live sandbox counts.
type PoolCounts struct {
	Provisioning int64 `json:"provisioning"`
	Warm         int64 `json:"warm"`
	Claimed      int64 `json:"claimed"`
	Releasing    int64 `json:"releasing"`
	Failed       int64 `json:"failed"`
}

// Pool is how the API shows a pool: its spec, state, generation and live counts.
type Pool struct {
	ID                      string             `json:"id"`
	Name                    string             `json:"name"`
	Image                   string             `json:"image"`
	Backend                 string             `json:"backend"`
	CPU                     float64            `json:"cpu"`
	MemoryMB                int64              `json:"memory_mb"`
	Autoscaling             Autoscaling        `json:"autoscaling"`
	ClaimTTLSeconds         int64              `json:"claim_ttl_seconds"`
	MaxClaimLifetimeSeconds int64              `json:"max_claim_lifetime_seconds"`
	IdleTimeoutSeconds      *int64             `json:"idle_timeout_seconds"`
	IdlePauseSeconds        *int64             `json:"idle_pause_seconds"`
	Env                     map[string]string  `json:"env"`
	Kubernetes              *PoolKubernetes    `json:"kubernetes"`
	Prime                   *PoolPrime         `json:"prime"`
	Egress                  *EgressPolicy      `json:"egress"`
	Recording               *PoolRecordingView `json:"recording"`
	ProfilePaths            []string           `json:"profile_paths"`
	State                   string             `json:"state"`
	Generation              int64              `json:"generation"`
	Counts                  PoolCounts         `json:"counts"`
	CreatedAt               string             `json:"created_at"`
	UpdatedAt               string             `json:"updated_at"`
}

// Tenant is the calling key's tenant.
type Tenant struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Quotas       map[string]any `json:"quotas"`
	Retention    map[string]any `json:"retention"`
	EmbedOrigins []string       `json:"embed_origins"`
	CreatedAt    string         `json:"created_at"`
	UpdatedAt    string         `json:"updated_at"`
}

// UpdateTenantRequest is the body of PATCH /v1/tenant.
type UpdateTenantRequest struct {
	EmbedOrigins []string `json:"embed_origins"`
	// Retention is left out: the provider manages only the embed origins (a PATCH keeps the rest).
	Retention map[string]any `json:"retention,omitempty"`
}

// APIKey is a key as listed: its prefix, never the secret.
type APIKey struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Role       string  `json:"role"`
	Prefix     string  `json:"prefix"`
	CreatedAt  string  `json:"created_at"`
	LastUsedAt *string `json:"last_used_at"`
	RevokedAt  *string `json:"revoked_at"`
}

// APIKeyCreated carries the secret, in the creation response only.
type APIKeyCreated struct {
	APIKey
	Key string `json:"key"`
}

// CreateAPIKeyRequest is the body of POST /v1/api-keys.
type CreateAPIKeyRequest struct {
	Name string `json:"name"`
	Role string `json:"role"`
}

// Claim is the part of a claim the provider reads: which pool it holds and whether it is live.
type Claim struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Pool      string `json:"pool"`
	PoolID    string `json:"pool_id"`
	Status    string `json:"status"`
	ExpiresAt string `json:"expires_at"`
}

// ErrorBody is the API's one error shape, inside {"error": …}.
type ErrorBody struct {
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Details   map[string]any `json:"details,omitempty"`
	RequestID string         `json:"request_id"`
}

type page[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"next_cursor"`
}
