"""The cluster's orchestration, free of Pulumi and written once, so the duplicate guard, the
lost-answer recovery, adoption and the waits behave the same whichever host runs them."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from typing import Any

from together_api.kubeconfig import KubeconfigError
from together_api.retry import RetryDecision, call_with_retry
from together_api.wire import Cluster
from together_facts.errors import (
    ApiConnectionError,
    NotFoundError,
    ProvisioningFailedError,
    ServerError,
    SpecError,
    TogetherError,
)
from together_provider.cluster import mapping, rules
from together_provider.cluster.table import CLUSTER, ClusterSpec
from together_provider.framework.lifecycle import (
    DELETE_TIMEOUT_SECONDS,
    Applied,
    Observed,
    ResourceLifecycle,
)
from together_provider.framework.schema import Stored

__all__ = ["ClusterLifecycle"]


class _LostAnswer(Exception):
    """A POST whose answer never came (a 5xx or a dropped connection): the one failure `_post`
    retries, and only after looking the name up."""

    def __init__(self, unsure: ServerError | ApiConnectionError) -> None:
        super().__init__(unsure.message)
        self.unsure = unsure


class ClusterLifecycle(ResourceLifecycle):
    """One Together cluster's lifecycle over a caller-owned client (`framework.lifecycle`'s
    contract). The cluster's own: without `timeout_seconds`, the input `ready_timeout_seconds`
    bounds the Ready wait; an update waits for Ready only when the *standard* count changed; an
    error names the cluster."""

    RULEBOOK = rules.RULEBOOK

    # ------------------------------------------------------------------ create

    def create(self, spec: ClusterSpec, *, timeout_seconds: float | None = None) -> Applied:
        """Adopt `adopt_cluster_id` when set; else refuse a duplicate name, POST, wait for Ready."""
        props = CLUSTER.to_props(spec)
        timeout = self._ready_timeout(spec, timeout_seconds)
        if spec.adopt_cluster_id is not None:
            cluster = self._adopt(spec, spec.adopt_cluster_id, timeout)
        else:
            self._refuse_duplicate(spec)
            cluster = self._provision(spec, timeout)
        return Applied(cluster.cluster_id, self._outputs(props, cluster))

    def _outputs(self, inputs: Mapping[str, Any], cluster: Cluster) -> dict[str, Any]:
        """The outputs; a kubeconfig that does not decode empties `kube_config` with a warning.

        By then the cluster exists and bills: failing here would leave it outside the state (an
        orphan). Keeping it managed, with the reason and the way to the credentials, loses nothing.
        """
        try:
            return mapping.outputs(inputs, cluster)
        except KubeconfigError as error:
            self._say(
                f"warning: {error}; the kube_config output is left empty and the cluster stays "
                f"managed (credentials: `tg clusters get-credentials {cluster.cluster_id}`)"
            )
            return mapping.outputs(inputs, cluster.model_copy(update={"kube_config": None}))

    def _ready_timeout(self, spec: ClusterSpec, timeout_seconds: float | None) -> float:
        return spec.ready_timeout_seconds if timeout_seconds is None else timeout_seconds

    def _find_live(self, spec: ClusterSpec) -> Cluster | None:
        """The live cluster with the spec's name, looked up through faults: a create hangs on it."""
        return self._client.outlast_faults(
            lambda: self._live_named(spec), subject=f"cluster {spec.cluster_name!r}: name lookup"
        )

    def _live_named(self, spec: ClusterSpec) -> Cluster | None:
        """The live (not Deleting) cluster with the spec's name in its project, if any."""
        return next(
            (
                cluster
                for cluster in self._client.list_clusters(project_id=spec.project_id)
                if cluster.cluster_name == spec.cluster_name and not cluster.is_deleting
            ),
            None,
        )

    def _refuse_duplicate(self, spec: ClusterSpec) -> None:
        """A live cluster with this name means an earlier create's result was never recorded
        (a crash between the POST and the state write): creating again would double-bill."""
        cluster = self._find_live(spec)
        if cluster is not None:
            raise SpecError(
                f"cluster {spec.cluster_name!r}: a cluster with this name already exists "
                f"({cluster.cluster_id}, status {cluster.status}) in project "
                f"{cluster.project_id or '(default)'}; refusing to create a duplicate",
                resource=spec.cluster_name,
                field="cluster_name",
                fix=f"take it over with adopt_cluster_id={cluster.cluster_id!r}, delete it, "
                "or choose another cluster_name",
            )

    def _post(self, spec: ClusterSpec) -> Cluster:
        """POST within the client's bounded retry policy, re-checking the name before each retry.

        A 5xx or a dropped connection leaves it open whether the cluster was created, and a real
        502 can precede a cluster that only appears in the list a moment later. So after a
        backoff the name is looked up again: a live cluster of this name is the one a POST
        created (the duplicate guard saw none just before), and only when it is still absent is
        the POST sent again. Never a blind retry that could create a second, billed cluster.
        The retries are `call_with_retry`'s, the one retry loop; the lookups are this method's.
        A round whose retries are spent with nothing found (or whose lookup was lost) is made
        again by `outlast_faults`, like a lost poll; each new round begins with a lookup.
        """
        client, policy = self._client, self._client.retry
        request = mapping.create_request(spec)
        lost: list[_LostAnswer] = []

        def post_unless_found() -> Cluster:
            if lost:  # a retry: the last POST may have created it after all
                found = self._live_named(spec)
                if found is not None:
                    self._found_after_lost_answer(spec, found, lost[-1].unsure)
                    return found
                self._say(
                    f"cluster {spec.cluster_name!r}: create failed ({lost[-1].unsure.message}) "
                    f"and no cluster of this name exists; retrying (lost answer {len(lost)})"
                )
            try:
                return client.create_cluster(request)
            except (ServerError, ApiConnectionError) as unsure:
                lost.append(_LostAnswer(unsure))
                raise lost[-1] from unsure

        def one_round() -> Cluster:
            try:
                return call_with_retry(
                    post_unless_found,
                    policy=policy,
                    classify=lambda exc: RetryDecision() if isinstance(exc, _LostAnswer) else None,
                    sleep=client.sleep,
                    clock=client.clock,
                )
            except _LostAnswer as spent:
                # Out of retries: one last look, then give up with the real cause.
                found = self._live_named(spec)
                if found is None:
                    raise spent.unsure from None
                self._found_after_lost_answer(spec, found, spent.unsure)
                return found

        return client.outlast_faults(one_round, subject=f"cluster {spec.cluster_name!r}: create")

    def _found_after_lost_answer(
        self, spec: ClusterSpec, cluster: Cluster, unsure: TogetherError
    ) -> None:
        self._say(
            f"cluster {spec.cluster_name!r}: the create answer was lost ({unsure.message}); "
            f"found it as {cluster.cluster_id}"
        )

    def _provision(self, spec: ClusterSpec, timeout: float) -> Cluster:
        created = self._post(spec)
        self._say(f"cluster {spec.cluster_name!r}: created {created.cluster_id}")
        try:
            return self._client.wait_until_ready(
                created.cluster_id, timeout=timeout, on_status=self._status, known=created
            )
        except TogetherError as failure:
            # A definite failure: never leave a half-created, billed cluster behind. Anything else
            # (the process being stopped, say) leaves the cluster for the duplicate guard to
            # report on the next `up`, where the user can adopt it.
            self._say(
                f"cluster {spec.cluster_name!r}: provisioning failed; deleting {created.cluster_id}"
            )
            self._delete_quietly(created.cluster_id)
            raise ProvisioningFailedError(
                f"cluster {spec.cluster_name!r}: {failure.message}; cluster "
                f"{created.cluster_id} was deleted so nothing is left billing",
                cluster_id=created.cluster_id,
                fix=failure.fix,
            ) from failure

    def _status(self, cluster: Cluster) -> None:
        self._say(f"cluster {cluster.cluster_name!r}: {cluster.status}")

    def _delete_quietly(self, cluster_id: str) -> None:
        with suppress(TogetherError):
            try:
                self._client.delete_cluster(cluster_id)
            except NotFoundError:
                return
            self._client.wait_until_deleted(cluster_id, timeout=DELETE_TIMEOUT_SECONDS)

    def _adopt(self, spec: ClusterSpec, cluster_id: str, timeout: float) -> Cluster:
        """Take over a cluster created outside Pulumi (`pulumi import` cannot, #16175)."""
        cluster = self._to_adopt(spec, cluster_id, self._client.get_cluster, "tg clusters list")
        changes = self._adoption_changes(spec, cluster)
        if changes:
            cluster = self._client.update_cluster(cluster_id, mapping.update_request(changes))
        self._say(f"cluster {spec.cluster_name!r}: adopted {cluster_id}")
        if "num_gpus" in changes or not cluster.is_ready:
            cluster = self._client.wait_until_ready(
                cluster_id, timeout=timeout, on_status=self._status
            )
        return cluster

    def _adoption_changes(self, spec: ClusterSpec, cluster: Cluster) -> dict[str, Any]:
        """The counts to PUT to take `cluster` over as `spec`, asked of the same rules as an
        update from the live counts: adoption must not slip past a rule `check` never saw
        (it saw a create), such as converting nodes between compute classes in one PUT."""
        live = CLUSTER.live_draft(spec, cluster)
        failures = self.RULEBOOK.failures(spec.cluster_name, spec, live)
        if failures:
            raise SpecError(
                f"cannot adopt {cluster.cluster_id} as specified: "
                + "; ".join(f.reason for f in failures),
                resource=spec.cluster_name,
                field=failures[0].field,
                fix="first adopt with the cluster's live counts "
                f"(num_gpus={cluster.num_gpus}, "
                f"num_preemptible_gpus={cluster.desired_preemptible_gpus}), then change them "
                "in later updates",
            )
        return self.RULEBOOK.plan_drafts(live, spec).update

    # ------------------------------------------------------------------ update

    def update(
        self,
        id_: str,
        old: Stored[ClusterSpec],
        spec: ClusterSpec,
        *,
        timeout_seconds: float | None = None,
    ) -> Applied:
        """One PUT of the changed counts; wait for Ready only when the *standard* count changed."""
        plan = self.RULEBOOK.plan_drafts(old.inputs, spec)
        inputs = CLUSTER.to_props(spec)
        if not plan.update:
            # Only provider-side settings changed: no API call, keep the last known state.
            return Applied(id_, {**old.outputs, **inputs})
        cluster = self._client.update_cluster(id_, mapping.update_request(plan.update))
        # The values, not just the names: inside a declared range the PUT is the nearest bound.
        sent = ", ".join(f"{k}={v}" for k, v in sorted(plan.update.items()))
        self._say(f"cluster {spec.cluster_name!r}: updated {sent}")
        if "num_gpus" in plan.update:
            cluster = self._client.wait_until_ready(
                id_, timeout=self._ready_timeout(spec, timeout_seconds), on_status=self._status
            )
        return Applied(id_, self._outputs(inputs, cluster))

    # ------------------------------------------------------------------ read / delete

    def read(self, id_: str, stored: Stored[ClusterSpec]) -> Observed | None:
        """The cluster as Together sees it now; None when it is gone (404 or Deleting)."""
        cluster = self._still_there(self._client.get_cluster, id_)
        if cluster is None:
            return None
        live = CLUSTER.live_inputs(stored.recorded, cluster)
        return Observed(id_, live, self._outputs(live, cluster))

    def delete(
        self, id_: str, stored: Stored[ClusterSpec], *, timeout_seconds: float | None = None
    ) -> None:
        """DELETE (404 is fine: already gone), then wait until Together answers 404, within
        `delete_timeout` (the recorded `ready_timeout_seconds` unless the host gives one)."""
        timeout = self.delete_timeout(stored, timeout_seconds)
        try:
            self._client.delete_cluster(id_)
        except NotFoundError:
            return
        self._client.wait_until_deleted(id_, timeout=timeout)
