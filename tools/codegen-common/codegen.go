// Package codegen is what our two SDK generators share: tools/ts-codegen (TypeScript) and
// tools/go-codegen (Go). Both read the `together` package schema the native plugin serves, bind
// it with pulumi's binder (its validation names a bad field), hand it to pulumi's generator for
// their language, and write the result so that the checked-in SDK regenerates without a diff.
// Only the language's own step (the generator call and the packaging the schema does not carry)
// differs, and stays in each tool.
//
// It is its own module, which both generators' go.mod reach by a `replace` directive; its
// requirements are both tools' pins (pulumi's pkg/v3 v3.248.0). It has no go.sum: it is only
// ever built inside a generator's module, whose go.sum covers it. Both build.sh list its files
// among their INPUTS: a change here rebuilds both.
package codegen

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// Main is a generator's command line, `TOOL --schema schema.json --out DIR`: it reads the
// schema (- is stdin), calls generate, and makes DIR hold exactly the files it returns; keep
// names the directories under DIR that belong to the language's tools, not to the generator
// (node_modules/, bin/), which are left alone.
func Main(tool, usage string, generate func(raw []byte) (map[string][]byte, error), keep ...string) {
	schemaPath, out, err := parseFlags()
	if err == nil {
		var raw []byte
		if raw, err = readSchema(schemaPath); err == nil {
			var files map[string][]byte
			if files, err = generate(raw); err == nil {
				err = writeTree(out, files, keep)
			}
		}
	}
	if errors.Is(err, errUsage) {
		fmt.Fprintln(os.Stderr, "usage: "+usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", tool, err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func parseFlags() (schemaPath, out string, err error) {
	flags := flag.NewFlagSet(os.Args[0], flag.ContinueOnError)
	schemaFlag := flags.String("schema", "", "the package schema (JSON) to generate from; - reads stdin")
	outFlag := flags.String("out", "", "the SDK directory to (re)write; files the generator no longer writes are removed")
	if err := flags.Parse(os.Args[1:]); err != nil || *schemaFlag == "" || *outFlag == "" || flags.NArg() != 0 {
		return "", "", errUsage
	}
	return *schemaFlag, *outFlag, nil
}

func readSchema(path string) ([]byte, error) {
	var raw []byte
	var err error
	if path == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the schema: %w", err)
	}
	return raw, nil
}

// Package is the schema bound for a generator: its language.<language> section is decoded into
// info (a pointer to the generator's package-info type, e.g. *nodejs.NodePackageInfo), complete
// checks it and fills in the packaging the tool adds (it sees the whole schema), and the section
// is written back before the schema is bound.
func Package(
	raw []byte, language string, info any, complete func(spec schema.PackageSpec) error,
) (*schema.Package, error) {
	spec, err := parseSpec(raw)
	if err != nil {
		return nil, err
	}
	if section, ok := spec.Language[language]; ok {
		if err := json.Unmarshal(section, info); err != nil {
			return nil, fmt.Errorf("the schema's language.%s does not parse: %w", language, err)
		}
	}
	if err := complete(spec); err != nil {
		return nil, err
	}
	section, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	if spec.Language == nil {
		spec.Language = map[string]schema.RawMessage{}
	}
	spec.Language[language] = section
	return bind(spec)
}

// parseSpec parses the schema and checks that it names a package and a version.
func parseSpec(raw []byte) (schema.PackageSpec, error) {
	var spec schema.PackageSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return spec, fmt.Errorf("the schema is not a Pulumi package schema: %w", err)
	}
	if spec.Name == "" || spec.Version == "" {
		return spec, errors.New("the schema has no name or version: generate it with together_provider.native.package_schema")
	}
	return spec, nil
}

// bind binds the schema with its validation: an invalid schema is an error naming the field.
func bind(spec schema.PackageSpec) (*schema.Package, error) {
	pkg, diags, err := schema.BindSpec(spec, NoDependencies{}, schema.ValidationOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot bind the schema: %w", err)
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("the schema is invalid: %s", diags.Error())
	}
	return pkg, nil
}

// NoDependencies is the loader the binder asks for packages the schema refers to: the `together`
// schema refers to none (only to the built-in pulumi.json types), so any request is an error
// naming the package rather than a plugin download.
type NoDependencies struct{}

func (NoDependencies) refuse(name string) error {
	return fmt.Errorf("the schema refers to package %q; the generators write self-contained packages only", name)
}

func (l NoDependencies) LoadPackage(name string, _ *semver.Version) (*schema.Package, error) {
	return nil, l.refuse(name)
}

func (l NoDependencies) LoadPackageV2(_ context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, l.refuse(d.Name)
}

func (l NoDependencies) LoadPackageReference(name string, _ *semver.Version) (schema.PackageReference, error) {
	return nil, l.refuse(name)
}

func (l NoDependencies) LoadPackageReferenceV2(
	_ context.Context, d *schema.PackageDescriptor,
) (schema.PackageReference, error) {
	return nil, l.refuse(d.Name)
}

// writeTree makes `out` hold exactly `files`: stale generated files are removed, so a resource
// dropped from the schema disappears from the SDK. The directories named in keep (build output
// and installed packages) are left alone. Files are written in a stable order.
func writeTree(out string, files map[string][]byte, keep []string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	kept := map[string]bool{}
	for _, dir := range keep {
		kept[dir] = true
	}
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(out, path)
		if d.IsDir() {
			if kept[rel] {
				return filepath.SkipDir
			}
			return nil
		}
		if _, generated := files[filepath.ToSlash(rel)]; !generated {
			return os.Remove(path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot clean %s: %w", out, err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
