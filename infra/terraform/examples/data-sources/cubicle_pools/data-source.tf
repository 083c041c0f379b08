data "cubicle_pools" "all" {}

output "pool_names" {
  value = data.cubicle_pools.all.names
}
