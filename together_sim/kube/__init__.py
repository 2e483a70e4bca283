"""A real Kubernetes control plane per simulated cluster (``python -m together_sim --kubernetes``).

Modules: ``pki`` (certificates, kubeconfig), ``processes`` (etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and KWOK on loopback; none outlives the simulator),
``client`` (the few REST calls Together's side makes), ``views`` (what the world says, copied
under its lock), ``mirror`` (Nodes, drains and PersistentVolumes kept in step with the world),
``pods`` (pods end on the simulator's clock), ``hub`` (one mirror per cluster). Uses only
``together_api`` and the simulator's own modules. See docs/kubernetes-sim.md.
"""
