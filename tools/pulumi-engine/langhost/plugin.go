package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
)

// defaultPluginVirtualenv is the virtualenv a plugin that is not an analyzer runs in when its
// PulumiPlugin.yaml names none. A policy pack (an analyzer) gets no default, as upstream
// (`isPlugin := req.Kind != AnalyzerPlugin`): without a `virtualenv` option in its
// PulumiPolicy.yaml it runs in the ambient python3, so a pack must name its virtualenv.
const defaultPluginVirtualenv = "venv"

// RunPlugin runs a Python plugin, which is how the engine starts a Python policy pack
// (`pulumi preview --policy-pack DIR`: NewPolicyAnalyzer in pkg/v3/resource/plugin hands the
// pack's directory and the engine address to the language host of the pack's runtime). It
// follows the upstream host (sdk/python/cmd/pulumi-language-python/main.go in pulumi/pulumi):
//
//   - the runtime options of the plugin's PulumiPolicy.yaml are parsed as a program's are, and
//     with the pip toolchain and no `virtualenv` option a plugin runs in `<dir>/venv`, unless it
//     is an analyzer (a policy pack), which runs in the ambient interpreter;
//   - a directory with `__main__.py` runs as `python <dir> <args...>` (the args are the engine
//     address); a directory without one but with a buildable pyproject.toml runs as
//     `python -m pulumi.run.plugin <project name> <args...>`;
//   - the working directory and the extra environment come from the request, and the plugin's
//     stdout and stderr are streamed back (the engine reads the gRPC port the plugin prints);
//   - the plugin's exit code is sent as the last message.
func (h *host) RunPlugin(
	req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer,
) error {
	info := req.GetInfo()
	opts, err := parseOptions(info)
	if err != nil {
		return err
	}
	isPlugin := req.GetKind() != string(apitype.AnalyzerPlugin)
	if isPlugin && opts.Toolchain == toolchain.Pip && opts.Virtualenv == "" {
		opts.Virtualenv = defaultPluginVirtualenv
	}
	tc, err := toolchain.ResolveToolchain(opts)
	if err != nil {
		return err
	}
	ctx := server.Context()
	if err := tc.ValidateVenv(ctx); err != nil {
		return fmt.Errorf("plugin %s: %w", info.GetProgramDirectory(), err)
	}
	cmd, err := pluginCommand(ctx, req, tc, opts)
	if err != nil {
		return err
	}

	closer, stdout, stderr, err := rpcutil.MakeRunPluginStreams(server, false)
	if err != nil {
		return err
	}
	defer closer.Close() // best effort; the explicit Close below reports its error
	cmd.Dir = req.GetPwd()
	cmd.Env = append(cmd.Env, req.GetEnv()...)
	cmd.Stdout, cmd.Stderr = stdout, stderr

	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			return fmt.Errorf("problem executing plugin program (could not run language executor): %w", err)
		}
		code := int32(exitErr.ExitCode())
		if status, ok := exitErr.Sys().(syscall.WaitStatus); ok && status.Signaled() {
			code = int32(128 + status.Signal()) //nolint:gosec // a signal number is small
		}
		if err := closer.Close(); err != nil {
			return err
		}
		return server.Send(&pulumirpc.RunPluginResponse{
			Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: code},
		})
	}
	return closer.Close()
}

// pluginCommand is the interpreter command that starts the plugin in req (see RunPlugin).
func pluginCommand(
	ctx context.Context, req *pulumirpc.RunPluginRequest, tc toolchain.Toolchain, opts toolchain.PythonOptions,
) (*exec.Cmd, error) {
	if _, err := os.Stat(filepath.Join(opts.Root, "__main__.py")); err == nil {
		return tc.Command(ctx, append([]string{req.GetInfo().GetProgramDirectory()}, req.GetArgs()...)...)
	} else if !os.IsNotExist(err) {
		return nil, fmt.Errorf("looking for __main__.py: %w", err)
	}
	buildable, err := toolchain.IsBuildablePackage(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("checking if plugin is a buildable package: %w", err)
	}
	if !buildable {
		return nil, fmt.Errorf("plugin %s is not runnable: it has neither __main__.py nor a "+
			"buildable pyproject.toml", opts.Root)
	}
	check, err := tc.Command(ctx, "-c", "import pulumi.run.plugin")
	if err != nil {
		return nil, err
	}
	if out, err := check.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("plugin %s has no __main__.py and its Pulumi SDK cannot run a "+
			"packaged plugin (import pulumi.run.plugin: %s)", opts.Root, strings.TrimSpace(string(out)))
	}
	pyproject, err := toolchain.LoadPyproject(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("loading pyproject: %w", err)
	}
	return tc.ModuleCommand(ctx, "pulumi.run.plugin",
		append([]string{pyproject.Project.Name}, req.GetArgs()...)...)
}
