package provider

import "github.com/cubicle/terraform-provider-cubicle/internal/client"

func updateOrigins(origins ...string) client.UpdateTenantRequest {
	return client.UpdateTenantRequest{EmbedOrigins: origins}
}
