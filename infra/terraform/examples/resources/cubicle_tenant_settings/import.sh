# There is one settings object per tenant (the provider key's); any id imports it.
tofu import cubicle_tenant_settings.this tenant
