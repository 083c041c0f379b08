package client

// The contract's limits (packages/contract/src/api/pool.ts, tenant.ts, common.ts) that the
// provider checks at plan time. openapi_test.go compares each one to the OpenAPI document, so a
// limit changed in the contract fails that test until it is changed here too.

// Pool spec limits.
const (
	ImageMaxLength            = 512
	CPUMax                    = 64.0
	CPUStep                   = 0.001
	MemoryMBMin               = 256
	MemoryMBMax               = 262144
	AutoscalingSizeMax        = 1000
	AutoscalingMaxMin         = 1
	ClaimTTLSecondsMax        = 604800
	MaxClaimLifetimeSecondsMx = 2592000
	IdleTimeoutSecondsMax     = 604800
	IdlePauseSecondsMax       = 604800
	EnvValueMaxLength         = 4096
	// EnvMaxVariables is a refinement (no JSON Schema keyword), so the test cannot see it.
	EnvMaxVariables        = 64
	TolerationsMax         = 32
	RuntimeClassNameMaxLen = 253
	LabelKeyMaxLength      = 316
	NodeSelectorMaxLabels  = 32
	EmbedOriginsMax        = 50
	EmbedOriginMaxLength   = 253
	ResourceNameMaxLength  = 63
	APIKeyNameMaxLength    = 200
	// Prime: at most this many apps, a page URL and a wait text this long, a delay this long.
	PrimeAppsMax           = 8
	PrimeTimeoutSecondsMax = 240
	PrimeURLMaxLength      = 8192
	PrimeWaitTextMaxLength = 512
	PrimeDelayMSMax        = 60000
	// Egress: rules per list (allow, deny) and the length of one rule.
	EgressRulesMax      = 256
	EgressRuleMaxLength = 300
	// Recording: frames a second.
	RecordingFPSMin = 1
	RecordingFPSMax = 15
	// Profile paths: how many a pool lists and the length of one.
	ProfilePathsMin      = 1
	ProfilePathsMax      = 32
	ProfilePathMaxLength = 512
)

// Pool spec defaults: what the API stores for a field the request leaves out.
const (
	DefaultBackend                 = "local"
	DefaultCPU                     = 1.0
	DefaultMemoryMB                = 2048
	DefaultAutoscalingMin          = 0
	DefaultAutoscalingInitial      = 1
	DefaultAutoscalingMax          = 5
	DefaultClaimTTLSeconds         = 900
	DefaultMaxClaimLifetimeSeconds = 86400
	DefaultTolerationOperator      = "Equal"
	DefaultAPIKeyRole              = "member"
	DefaultPrimeTimeoutSeconds     = 60
	DefaultRecordingFPS            = 5
	DefaultRecordingQuality        = "medium"
)

// Patterns, as the document spells them (Go's regexp reads the `\/` escapes the same way).
const (
	ResourceNamePattern     = `^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`
	EnvNamePattern          = `^[A-Za-z_][A-Za-z0-9_]{0,127}$`
	RuntimeClassNamePattern = `^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	LabelKeyPattern         = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	LabelValuePattern       = `^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`
	EmbedOriginPattern      = `^(https:\/\/(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*|http:\/\/(localhost|127\.0\.0\.1))(:([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?$`
)

// Enumerations.
var (
	Backends            = []string{"local", "kubernetes", "kubevirt"}
	APIKeyRoles         = []string{"admin", "member"}
	TolerationOperators = []string{"Exists", "Equal"}
	TolerationEffects   = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
	// PrimeApps are the guest's LaunchApp names; PrimeWaitKinds the PrimeWait branches.
	PrimeApps      = []string{"browser", "browser.firefox", "office.writer", "office.calc", "terminal", "files", "editor"}
	PrimeWaitKinds = []string{"window_title", "element", "delay"}
	// EgressModes are a pool's egress modes, from most to least restrictive.
	EgressModes = []string{"none", "allowlist", "open"}
	// RecordingQualities trade bytes for sharpness.
	RecordingQualities = []string{"low", "medium", "high"}
)

// EgressRulePattern is one egress rule: a name or *.name, an IPv4 or IPv6 address or CIDR (IPv6
// in brackets when ports follow), optionally :port or :low-high.
const EgressRulePattern = `^(((\*\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?|((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\/(3[0-2]|[12]?[0-9]))?)(:([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])(-([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?)?|(([0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|([0-9A-Fa-f]{1,4}:){1,7}:|([0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}|([0-9A-Fa-f]{1,4}:){1,5}(:[0-9A-Fa-f]{1,4}){1,2}|([0-9A-Fa-f]{1,4}:){1,4}(:[0-9A-Fa-f]{1,4}){1,3}|([0-9A-Fa-f]{1,4}:){1,3}(:[0-9A-Fa-f]{1,4}){1,4}|([0-9A-Fa-f]{1,4}:){1,2}(:[0-9A-Fa-f]{1,4}){1,5}|[0-9A-Fa-f]{1,4}:(:[0-9A-Fa-f]{1,4}){1,6}|:((:[0-9A-Fa-f]{1,4}){1,7}|:)|([0-9A-Fa-f]{1,4}:){6}((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])|([0-9A-Fa-f]{1,4}:){1,4}:((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])|::([0-9A-Fa-f]{1,4}:){0,5}((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))(\/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))?|\[(([0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|([0-9A-Fa-f]{1,4}:){1,7}:|([0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}|([0-9A-Fa-f]{1,4}:){1,5}(:[0-9A-Fa-f]{1,4}){1,2}|([0-9A-Fa-f]{1,4}:){1,4}(:[0-9A-Fa-f]{1,4}){1,3}|([0-9A-Fa-f]{1,4}:){1,3}(:[0-9A-Fa-f]{1,4}){1,4}|([0-9A-Fa-f]{1,4}:){1,2}(:[0-9A-Fa-f]{1,4}){1,5}|[0-9A-Fa-f]{1,4}:(:[0-9A-Fa-f]{1,4}){1,6}|:((:[0-9A-Fa-f]{1,4}){1,7}|:)|([0-9A-Fa-f]{1,4}:){6}((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])|([0-9A-Fa-f]{1,4}:){1,4}:((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])|::([0-9A-Fa-f]{1,4}:){0,5}((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))(\/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))?\](:([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])(-([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?)?)$`
