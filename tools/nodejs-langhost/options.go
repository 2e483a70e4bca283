package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// nodeOptions are the runtime options of Pulumi.yaml (`runtime: {name: nodejs, options: ...}`),
// with upstream's names, types and defaults: TypeScript is on unless `typescript: false`.
type nodeOptions struct {
	typescript     bool
	tsconfig       string
	nodeargs       string
	packagemanager npm.PackageManagerType
}

// parseOptions validates the options as upstream does: a value of the wrong type, or an
// unknown package manager, is an error naming the option rather than a silent default.
func parseOptions(info *pulumirpc.ProgramInfo) (nodeOptions, error) {
	opts := nodeOptions{typescript: true, packagemanager: npm.AutoPackageManager}
	raw := info.GetOptions().AsMap()
	if value, ok := raw["typescript"]; ok {
		ts, ok := value.(bool)
		if !ok {
			return opts, fmt.Errorf("the nodejs runtime option typescript must be true or false, not %v", value)
		}
		opts.typescript = ts
	}
	for name, target := range map[string]*string{"tsconfig": &opts.tsconfig, "nodeargs": &opts.nodeargs} {
		if value, ok := raw[name]; ok {
			s, ok := value.(string)
			if !ok {
				return opts, fmt.Errorf("the nodejs runtime option %s must be a string, not %v", name, value)
			}
			*target = s
		}
	}
	if value, ok := raw["packagemanager"]; ok {
		pm, _ := value.(string)
		switch npm.PackageManagerType(pm) {
		case npm.AutoPackageManager, npm.NpmPackageManager, npm.YarnPackageManager,
			npm.PnpmPackageManager, npm.BunPackageManager:
			opts.packagemanager = npm.PackageManagerType(pm)
		default:
			return opts, fmt.Errorf(
				"the nodejs runtime option packagemanager must be one of auto, npm, yarn, pnpm or bun, not %v", value)
		}
	}
	return opts, nil
}

// packageJSON is the part of a package's package.json that says whether it is a Pulumi SDK
// with a resource plugin behind it.
type packageJSON struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Pulumi  struct {
		Resource bool   `json:"resource"`
		Name     string `json:"name"`
		Version  string `json:"version"`
		Server   string `json:"server"`
	} `json:"pulumi"`
}

// pluginPackages finds the resource plugins the program's installed SDKs need: every package
// under node_modules (scoped or not, nested node_modules included, symlinks followed as npm
// links and pnpm make them) whose package.json has `"pulumi": {"resource": true}`, as upstream
// does. A package that declares a plugin without naming it is an error naming the package.
func pluginPackages(programDir string) ([]*pulumirpc.PackageDependency, error) {
	found := map[string]*pulumirpc.PackageDependency{}
	visited := map[string]bool{}
	var problems []error
	var walk func(nodeModules string)
	walk = func(nodeModules string) {
		real, err := filepath.EvalSymlinks(nodeModules)
		if err != nil || visited[real] {
			return // no node_modules here (or seen already)
		}
		visited[real] = true
		for _, dir := range packageDirs(real) {
			raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
			if err == nil {
				var info packageJSON
				if json.Unmarshal(raw, &info) == nil && info.Pulumi.Resource {
					if dep, err := pluginOf(info); err != nil {
						problems = append(problems, fmt.Errorf("%s: %w", dir, err))
					} else {
						found[dep.Name+"@"+dep.Version] = dep
					}
				}
			}
			walk(filepath.Join(dir, "node_modules"))
		}
	}
	walk(filepath.Join(programDir, "node_modules"))
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	deps := make([]*pulumirpc.PackageDependency, 0, len(keys))
	for _, k := range keys {
		deps = append(deps, found[k])
	}
	return deps, nil
}

// packageDirs lists the package directories of one node_modules: `name/` and `@scope/name/`.
func packageDirs(nodeModules string) []string {
	var dirs []string
	entries, _ := os.ReadDir(nodeModules)
	for _, e := range entries {
		path := filepath.Join(nodeModules, e.Name())
		if strings.HasPrefix(e.Name(), ".") {
			continue // .bin, .package-lock.json
		}
		if strings.HasPrefix(e.Name(), "@") {
			scoped, _ := os.ReadDir(path)
			for _, s := range scoped {
				dirs = append(dirs, filepath.Join(path, s.Name()))
			}
			continue
		}
		dirs = append(dirs, path)
	}
	return dirs
}

func pluginOf(info packageJSON) (*pulumirpc.PackageDependency, error) {
	name := info.Pulumi.Name
	if name == "" {
		if !strings.HasPrefix(info.Name, "@pulumi/") {
			return nil, fmt.Errorf("package %q declares a resource plugin but no \"pulumi\": {\"name\": ...}; "+
				"add the plugin's name there", info.Name)
		}
		name = strings.TrimPrefix(info.Name, "@pulumi/")
	}
	version := info.Pulumi.Version
	if version == "" {
		version = info.Version
	}
	if version == "" {
		return nil, fmt.Errorf("package %q declares a resource plugin but no version", info.Name)
	}
	if !strings.HasPrefix(version, "v") {
		version = "v" + version
	}
	return &pulumirpc.PackageDependency{
		Name: name, Kind: "resource", Version: version, Server: info.Pulumi.Server,
	}, nil
}
