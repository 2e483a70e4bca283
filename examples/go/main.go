// One Together GPU cluster with a preemptible target, and the shared volume that keeps its
// checkpoints, declared with the Go SDK generated from the native plugin's schema (sdk/go): the
// TypeScript example's program (examples/typescript) in Go. See docs/go.md.
package main

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
	"local.invalid/together-gpu-clusters/sdk/go/together"
)

const region = "us-central-8"

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")
		// Standard GPUs are never preempted; the preemptible target is filled asynchronously,
		// so `preemptibleAllocated` may stay below `preemptibleTarget`.
		numGpus := cfg.RequireInt("numGpus")
		numPreemptibleGpus := cfg.RequireInt("numPreemptibleGpus")

		checkpoints, err := together.NewSharedVolume(ctx, "checkpoints", &together.SharedVolumeArgs{
			Region:    pulumi.String(region),
			SizeTib:   pulumi.Int(1),
			ProjectId: pulumi.String("proj-ml-dev"),
		})
		if err != nil {
			return err
		}

		notebooks, err := together.NewCluster(ctx, "notebooks", &together.ClusterArgs{
			Region:              pulumi.String(region),
			GpuType:             pulumi.String("H100_SXM"),
			NumGpus:             pulumi.Int(numGpus),
			NumPreemptibleGpus:  pulumi.Int(numPreemptibleGpus),
			CudaVersion:         pulumi.String("12.8"),
			NvidiaDriverVersion: pulumi.String("570"),
			ProjectId:           pulumi.String("proj-ml-dev"),
			VolumeId:            checkpoints.VolumeId,
			VolumeRegion:        checkpoints.Region,
			// Nested objects take the API's own keys; observability changes in place.
			ClusterConfig: pulumi.Map{
				"load_balancer": pulumi.String("NONE"),
				"observability": pulumi.Map{"enabled": pulumi.Bool(true)},
			},
		}, pulumi.Timeouts(&pulumi.CustomTimeouts{Create: "45m", Update: "45m"}))
		if err != nil {
			return err
		}

		ctx.Export("clusterId", notebooks.ClusterId)
		ctx.Export("status", notebooks.Status)
		ctx.Export("standardGpus", notebooks.NumGpus)
		ctx.Export("preemptibleTarget", notebooks.DesiredPreemptibleGpus)
		ctx.Export("preemptibleAllocated", notebooks.AllocatedPreemptibleGpus)
		ctx.Export("volumeId", checkpoints.VolumeId)
		ctx.Export("kubeconfig", notebooks.KubeConfig)
		ctx.Export("workerNodes", notebooks.WorkerNodes)
		return nil
	})
}
