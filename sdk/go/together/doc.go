// Together AI GPU clusters (standard GPUs plus a preemptible target) and the shared volumes that keep their checkpoints.
package together
