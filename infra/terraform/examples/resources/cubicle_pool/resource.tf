# A warm pool of desktops on this machine's local backend.
resource "cubicle_pool" "agents" {
  name  = "agents"
  image = "local"

  autoscaling = {
    min     = 1
    initial = 2
    max     = 10
  }

  claim_ttl_seconds          = 900
  max_claim_lifetime_seconds = 14400
  idle_timeout_seconds       = 300

  env = {
    LANG = "en_US.UTF-8"
  }

  # Sandboxes reach these destinations only (unset: the installation default, `none`).
  egress = {
    mode  = "allowlist"
    allow = ["api.example.com:443", "*.githubusercontent.com"]
    deny  = ["ads.example.com"]
  }

  # destroy waits this long for live claims to end after the drain starts.
  drain_timeout = "15m"
}

# A pool of Kubernetes Pods under gVisor on dedicated nodes.
resource "cubicle_pool" "browsers" {
  name      = "browsers"
  image     = "ghcr.io/acme/cubicle-desktop:2026.11"
  backend   = "kubernetes"
  cpu       = 1.5
  memory_mb = 4096

  autoscaling = {
    min     = 2
    initial = 4
    max     = 50
  }

  kubernetes = {
    runtime_class_name = "gvisor"
    node_selector      = { "cubicle.dev/desktops" = "true" }
    tolerations = [
      { key = "cubicle.dev/desktops", operator = "Exists", effect = "NoSchedule" },
    ]
  }
}

# Warm desktops with Chromium already open on the app's page: a claim lists the window
# (`primed_windows`), so the agent's first call acts on it without looking it up.
resource "cubicle_pool" "checkout" {
  name  = "checkout"
  image = "local"

  prime = {
    apps = [
      {
        app      = "browser"
        url      = "https://shop.example.com/checkout"
        wait_for = { kind = "window_title", contains = "Checkout" }
      },
    ]
    timeout_seconds = 60
  }

  # Every claim is recorded (a claim may turn it off); claims with a `profile` keep these paths
  # of the home between claims (unset: the browsers' profiles, Documents, Desktop, shell history).
  recording = {
    video   = true
    fps     = 5
    quality = "medium"
  }
  profile_paths = [".config/chromium", "Downloads"]
}

output "agents_warm" {
  value = cubicle_pool.agents.counts.warm
}
