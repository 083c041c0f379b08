data "cubicle_pool" "agents" {
  name = "agents"
}

output "agents_free" {
  value = data.cubicle_pool.agents.counts.warm
}
