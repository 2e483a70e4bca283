package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
)

// parseOptions reads the runtime options of Pulumi.yaml (`virtualenv`, `typechecker`,
// `toolchain`) with the upstream host's rules: each must be a string, and an unknown value is an
// error rather than a silent fallback. With none, the interpreter is $PULUMI_PYTHON_CMD or
// python3 and the toolchain pip, as upstream.
func parseOptions(info *pulumirpc.ProgramInfo) (toolchain.PythonOptions, error) {
	opts := toolchain.PythonOptions{
		Root:       info.GetRootDirectory(),
		ProgramDir: info.GetProgramDirectory(),
		Toolchain:  toolchain.Pip,
	}
	raw := info.GetOptions().AsMap()
	if venv, ok, err := stringOption(raw, "virtualenv"); err != nil {
		return opts, err
	} else if ok {
		opts.Virtualenv = venv
	}
	// The names of each choice option and what they select, in the same order (the toolchain
	// package's types are unexported, so no map type can name them).
	if err := choiceOption(raw, "typechecker", &opts.Typechecker, []string{"mypy", "pyright"},
		toolchain.TypeCheckerMypy, toolchain.TypeCheckerPyright); err != nil {
		return opts, err
	}
	if err := choiceOption(raw, "toolchain", &opts.Toolchain, []string{"pip", "uv", "poetry"},
		toolchain.Pip, toolchain.Uv, toolchain.Poetry); err != nil {
		return opts, err
	}
	return opts, nil
}

// stringOption is option `key` of `raw` and whether it is set; a value that is not a string is an
// error naming the option, as upstream's.
func stringOption(raw map[string]interface{}, key string) (string, bool, error) {
	value, ok := raw[key]
	if !ok {
		return "", false, nil
	}
	text, isString := value.(string)
	if !isString {
		return "", false, fmt.Errorf("%s option must be a string", key)
	}
	return text, true, nil
}

// choiceOption sets `*into` to the value of the name option `key` of `raw` holds (`names[i]`
// selects `values[i]`), when it is set; any other name is an error rather than a silent fallback.
func choiceOption[T any](raw map[string]interface{}, key string, into *T, names []string, values ...T) error {
	name, ok, err := stringOption(raw, key)
	if err != nil || !ok {
		return err
	}
	i := slices.Index(names, name)
	if i < 0 {
		return fmt.Errorf("unsupported %s option: %s", key, name)
	}
	*into = values[i]
	return nil
}

// resolve parses the options and finds the toolchain they name.
func resolve(info *pulumirpc.ProgramInfo) (toolchain.Toolchain, toolchain.PythonOptions, error) {
	opts, err := parseOptions(info)
	if err != nil {
		return nil, opts, err
	}
	tc, err := toolchain.ResolveToolchain(opts)
	return tc, opts, err
}

// typecheck runs the `typechecker` option's checker over the program before it runs, as
// upstream does: a type error fails the update before any resource is touched.
func typecheck(ctx context.Context, tc toolchain.Toolchain, opts toolchain.PythonOptions) error {
	var name string
	switch opts.Typechecker {
	case toolchain.TypeCheckerMypy:
		name = "mypy"
	case toolchain.TypeCheckerPyright:
		name = "pyright"
	default:
		return nil
	}
	packages, err := tc.ListPackages(ctx, true)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(packages, func(p plugin.DependencyInfo) bool { return p.Name == name }) {
		return fmt.Errorf("The typechecker option is set to %s, but %s is not installed. "+
			"Please add an entry for %s to requirements.txt and run `%s/bin/pip install -r requirements.txt`",
			name, name, name, opts.Virtualenv)
	}
	args := []string{"-m", name}
	if name == "mypy" {
		venv, err := tc.VirtualEnvPath(ctx)
		if err != nil {
			return err
		}
		if venv != "" {
			if rel, err := filepath.Rel(opts.ProgramDir, venv); err == nil {
				args = append(args, "--exclude", rel)
			}
		}
	}
	args = append(args, opts.ProgramDir)
	cmd, err := tc.Command(ctx, args...)
	if err != nil {
		return err
	}
	cmd.Dir = opts.ProgramDir
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s failed: %w", name, err)
	}
	return nil
}
