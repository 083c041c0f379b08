// terraform-provider-cubicle serves the Cubicle provider to Terraform or OpenTofu.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/cubicle/terraform-provider-cubicle/internal/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
)

// version is stamped at release with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run with support for debuggers such as delve")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.opentofu.org/cubicle/cubicle",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
