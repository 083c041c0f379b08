package provider

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// TestDocsCoverEverySchemaAttribute fails when docs/ is stale: every top-level attribute of each
// resource and data source must appear in its page as tfplugindocs writes it ("- `name` ("), and
// the attribute's description with it. Regenerate with infra/terraform/generate-docs.mjs.
func TestDocsCoverEverySchemaAttribute(t *testing.T) {
	ctx := context.Background()
	_, here, _, _ := runtime.Caller(0)
	docs := filepath.Join(filepath.Dir(here), "..", "..", "docs")
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(docs, rel))
		if err != nil {
			t.Fatalf("docs/%s: %v (run node infra/terraform/generate-docs.mjs)", rel, err)
		}
		return string(b)
	}
	check := func(page string, attrs map[string]string) {
		text := read(page)
		for name, description := range attrs {
			if !strings.Contains(text, "- `"+name+"` (") {
				t.Errorf("docs/%s does not document %q", page, name)
			} else if description != "" && !strings.Contains(text, description) {
				t.Errorf("docs/%s: the description of %q is stale (want %q)", page, name, description)
			}
		}
	}
	p := &cubicleProvider{version: "test"}
	for _, newResource := range p.Resources(ctx) {
		r := newResource()
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "cubicle"}, &meta)
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		attrs := map[string]string{}
		for name, a := range s.Schema.Attributes {
			attrs[name] = a.GetDescription()
		}
		check("resources/"+strings.TrimPrefix(meta.TypeName, "cubicle_")+".md", attrs)
	}
	for _, newDataSource := range p.DataSources(ctx) {
		d := newDataSource()
		var meta datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "cubicle"}, &meta)
		var s datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &s)
		attrs := map[string]string{}
		for name, a := range s.Schema.Attributes {
			attrs[name] = a.GetDescription()
		}
		check("data-sources/"+strings.TrimPrefix(meta.TypeName, "cubicle_")+".md", attrs)
	}
}
