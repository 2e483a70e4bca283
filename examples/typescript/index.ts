// One Together GPU cluster with a preemptible target, and the shared volume that keeps its
// checkpoints, declared with the TypeScript SDK generated from the native plugin's schema
// (sdk/typescript). See docs/typescript.md.
import * as pulumi from "@pulumi/pulumi";
import * as together from "@together-gpu-clusters/together";

const config = new pulumi.Config();
// Standard GPUs are never preempted; the preemptible target is filled asynchronously, so
// `preemptibleAllocated` may stay below `preemptibleTarget`.
const numGpus = config.requireNumber("numGpus");
const numPreemptibleGpus = config.requireNumber("numPreemptibleGpus");

const region = "us-central-8";

const checkpoints = new together.SharedVolume("checkpoints", {
    region,
    sizeTib: 1,
    projectId: "proj-ml-dev",
});

const notebooks = new together.Cluster(
    "notebooks",
    {
        region,
        gpuType: "H100_SXM",
        numGpus,
        numPreemptibleGpus,
        cudaVersion: "12.8",
        nvidiaDriverVersion: "570",
        projectId: "proj-ml-dev",
        volumeId: checkpoints.volumeId,
        volumeRegion: checkpoints.region,
        // Nested objects take the API's own keys; observability changes in place.
        clusterConfig: { load_balancer: "NONE", observability: { enabled: true } },
    },
    { customTimeouts: { create: "45m", update: "45m" } },
);

export const clusterId = notebooks.clusterId;
export const status = notebooks.status;
export const standardGpus = notebooks.numGpus;
export const preemptibleTarget = notebooks.desiredPreemptibleGpus;
export const preemptibleAllocated = notebooks.allocatedPreemptibleGpus;
export const volumeId = checkpoints.volumeId;
export const kubeconfig = notebooks.kubeConfig;
export const workerNodes = notebooks.workerNodes;
