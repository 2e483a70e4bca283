package main

import (
	"context"
	"errors"
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
	if value, ok := raw["virtualenv"]; ok {
		venv, ok := value.(string)
		if !ok {
			return opts, errors.New("virtualenv option must be a string")
		}
		opts.Virtualenv = venv
	}
	if value, ok := raw["typechecker"]; ok {
		name, ok := value.(string)
		if !ok {
			return opts, errors.New("typechecker option must be a string")
		}
		switch name {
		case "mypy":
			opts.Typechecker = toolchain.TypeCheckerMypy
		case "pyright":
			opts.Typechecker = toolchain.TypeCheckerPyright
		default:
			return opts, fmt.Errorf("unsupported typechecker option: %s", name)
		}
	}
	if value, ok := raw["toolchain"]; ok {
		name, ok := value.(string)
		if !ok {
			return opts, errors.New("toolchain option must be a string")
		}
		switch name {
		case "pip":
			opts.Toolchain = toolchain.Pip
		case "uv":
			opts.Toolchain = toolchain.Uv
		case "poetry":
			opts.Toolchain = toolchain.Poetry
		default:
			return opts, fmt.Errorf("unsupported toolchain option: %s", name)
		}
	}
	return opts, nil
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
