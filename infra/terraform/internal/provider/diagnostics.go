package provider

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/cubicle/terraform-provider-cubicle/internal/client"
	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// addAPIError turns a failed call into one diagnostic whose summary says what went wrong in the
// user's terms (endpoint, key, role) and whose detail carries the API's code, message and request id.
func addAPIError(diags *diag.Diagnostics, c *client.Client, action string, err error) {
	summary, detail := explainAPIError(c.Endpoint(), action, err)
	diags.AddError(summary, detail)
}

func explainAPIError(endpoint, action string, err error) (summary, detail string) {
	var transport *client.TransportError
	if errors.As(err, &transport) {
		return "Cannot reach the Cubicle API at " + endpoint,
			fmt.Sprintf("Could not %s: %v\n\nCheck the provider's endpoint (or CUBICLE_URL): it must be the base URL of a running Cubicle API, e.g. https://cubicle.example.com.", action, err)
	}
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) {
		return "Cubicle call failed", fmt.Sprintf("Could not %s: %v", action, err)
	}
	switch apiErr.Status {
	case http.StatusUnauthorized:
		return "Cubicle rejected the API key (401 unauthenticated)",
			fmt.Sprintf("Could not %s: the API key is unknown or has been revoked.\n\nSet a valid key in the provider's api_key (or CUBICLE_API_KEY); an admin can create one with `npm run cubicle -- key create`.\n\n%v", action, err)
	case http.StatusForbidden:
		return "The API key's role may not do this (403 forbidden)",
			fmt.Sprintf("Could not %s: this needs an admin key, and the provider's key is not one (member keys manage pools and claims only).\n\nUse an admin key of the tenant in api_key (or CUBICLE_API_KEY).\n\n%v", action, err)
	case http.StatusNotFound:
		return "Not found in this tenant (404)",
			fmt.Sprintf("Could not %s: Cubicle answers 404 for names and ids that do not exist and for those of other tenants. Check the name and that the provider's api_key belongs to the tenant that owns it.\n\n%v", action, err)
	case http.StatusBadRequest:
		return "Cubicle refused the request (400)", fmt.Sprintf("Could not %s: %v", action, err)
	case http.StatusTooManyRequests:
		return "Cubicle limit reached (429)", fmt.Sprintf("Could not %s: %v", action, err)
	default:
		return fmt.Sprintf("Cubicle call failed (%d)", apiErr.Status), fmt.Sprintf("Could not %s: %v", action, err)
	}
}
