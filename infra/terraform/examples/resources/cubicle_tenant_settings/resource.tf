# The origins allowed to frame the live viewer (/embed/{ticket}).
resource "cubicle_tenant_settings" "this" {
  embed_origins = [
    "https://app.example.com",
    "https://*.preview.example.com",
    "http://localhost:3000",
  ]
}
