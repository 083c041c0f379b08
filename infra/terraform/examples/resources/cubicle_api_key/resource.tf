# A member key for CI. Its secret is stored in the state (sensitive): protect the state.
resource "cubicle_api_key" "ci" {
  name = "ci"
  role = "member"
}

output "ci_key" {
  value     = cubicle_api_key.ci.key
  sensitive = true
}
