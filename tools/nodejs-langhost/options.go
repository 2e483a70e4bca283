package main

import (
	"fmt"

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
