# Pools are imported by name.
tofu import cubicle_pool.agents agents
