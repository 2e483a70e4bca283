"""The Cluster dynamic provider: thin glue between Pulumi's hooks, the rules and the API client.

Importable and free of side effects on purpose: dill pickles this class *by reference* (module and
name only), so the provider process imports the code that is installed now, and the pickle holds
no credentials — the class has no instance attributes until `configure()` runs in the provider
process, and `configure()` state is never pickled.

What each hook does (details in the README's table):
- check: normalise (floats to ints), then the rules; a failure stops preview with zero API calls.
- diff: `rules.plan`; in place for counts, replacement for identity fields.
- create: refuse a duplicate name, POST, wait for Ready; on failure delete what was created.
- update: one PUT of the changed counts; wait only when the *standard* count changed.
- read: GET; 404 means gone; the live counts are returned as inputs so drift shows.
- delete: DELETE (404 is fine), then wait until Together answers 404.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, Final

from pulumi.dynamic import (
    CheckFailure,
    CheckResult,
    ConfigureRequest,
    CreateResult,
    DiffResult,
    ReadResult,
    ResourceProvider,
    UpdateResult,
)

from together_api.client import TogetherClient
from together_api.errors import (
    ApiConnectionError,
    NotFoundError,
    ProvisioningFailedError,
    ServerError,
    SpecError,
    TogetherError,
)
from together_api.wire import Cluster
from together_provider import mapping, rules
from together_provider.spec import ClusterSpec, is_unknown, normalise, require_known, to_props

DELETE_TIMEOUT_SECONDS: Final = 1800.0
CONFIG_API_KEY: Final = "together:apiKey"
CONFIG_BASE_URL: Final = "together:baseUrl"


def _say(message: str) -> None:
    """Progress for the person running `pulumi up`: the engine shows provider stderr.

    Best effort: when the CLI has died its pipe is gone, and a progress line must never turn into
    an error that changes what happens to a cluster.
    """
    with suppress(OSError):
        print(message, file=sys.stderr, flush=True)


def _inputs(props: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if not k.startswith("__")}


def _spec(props: dict[str, Any]) -> ClusterSpec:
    """The typed spec of already-checked properties (the engine re-sends ints as floats)."""
    spec, failures = normalise(
        {k: v for k, v in _inputs(props).items() if k not in mapping.OUTPUT_FIELDS}
    )
    if spec is None:
        first = failures[0]
        raise SpecError(f"{first.field}: {first.reason}", field=first.field)
    return spec


class ClusterProvider(ResourceProvider):
    """Manages one Together GPU cluster per resource; see the module docstring."""

    _api_key: str | None = None
    _base_url: str | None = None

    def configure(self, req: ConfigureRequest) -> None:
        # Stack config arrives decrypted here, in the provider process only.
        self._api_key = req.config.get(CONFIG_API_KEY) or None
        self._base_url = req.config.get(CONFIG_BASE_URL) or None

    @contextmanager
    def _client(self) -> Iterator[TogetherClient]:
        # Built per call: httpx clients hold SSL contexts (unpicklable), and the host runs up
        # to four hooks at once, so nothing per-request lives on self.
        client = TogetherClient(
            api_key=self._api_key or os.environ.get("TOGETHER_API_KEY"),
            base_url=self._base_url or os.environ.get("TOGETHER_BASE_URL"),
        )
        try:
            yield client
        finally:
            client.close()

    # ------------------------------------------------------------------ check / diff

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        raw_name = news.get("cluster_name")
        name = raw_name if isinstance(raw_name, str) and not is_unknown(raw_name) else "(unnamed)"
        inputs, failures = rules.check_inputs(name, _inputs(news), _inputs(olds) or None)
        return CheckResult(inputs, [CheckFailure(f.field, f.reason) for f in failures])

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        plan = rules.plan(_inputs(olds), _inputs(news))
        return DiffResult(
            changes=plan.has_changes,
            replaces=list(plan.replaces),
            delete_before_replace=plan.delete_before_replace,
        )

    # ------------------------------------------------------------------ create

    def create(self, props: dict[str, Any]) -> CreateResult:
        spec = _spec(props)
        inputs = to_props(spec)
        with self._client() as client:
            if isinstance(spec.adopt_cluster_id, str):
                cluster = self._adopt(client, spec, spec.adopt_cluster_id)
            else:
                self._refuse_duplicate(client, spec)
                cluster = self._provision(client, spec)
        return CreateResult(cluster.cluster_id, mapping.outputs(inputs, cluster))

    def _find_live(self, client: TogetherClient, spec: ClusterSpec) -> Cluster | None:
        """The live (not Deleting) cluster with the spec's name in its project, if any."""
        project = spec.project_id if isinstance(spec.project_id, str) else None
        return next(
            (
                cluster
                for cluster in client.list_clusters(project_id=project)
                if cluster.cluster_name == spec.cluster_name and not cluster.is_deleting
            ),
            None,
        )

    def _refuse_duplicate(self, client: TogetherClient, spec: ClusterSpec) -> None:
        """A live cluster with this name means an earlier create's result was never recorded
        (a crash between the POST and the state write): creating again would double-bill."""
        cluster = self._find_live(client, spec)
        if cluster is not None:
            raise SpecError(
                f"cluster {spec.cluster_name!r}: a cluster with this name already exists "
                f"({cluster.cluster_id}, status {cluster.status}) in project "
                f"{cluster.project_id or '(default)'}; refusing to create a duplicate",
                resource=str(spec.cluster_name),
                field="cluster_name",
                fix=f"take it over with adopt_cluster_id={cluster.cluster_id!r}, delete it, "
                "or choose another cluster_name",
            )

    def _post(self, client: TogetherClient, spec: ClusterSpec) -> Cluster:
        """POST once; when the answer is lost (5xx, dropped connection) the cluster may exist
        anyway. The duplicate guard saw no live cluster of this name just before, so one that
        exists now is the one this POST created: continue with it instead of failing (and
        instead of a blind retry that could create a second, billed cluster)."""
        try:
            return client.create_cluster(mapping.create_request(spec))
        except (ServerError, ApiConnectionError) as unsure:
            cluster = self._find_live(client, spec)
            if cluster is None:
                raise
            _say(
                f"cluster {spec.cluster_name!r}: the create answer was lost ({unsure.message}); "
                f"found it as {cluster.cluster_id}"
            )
            return cluster

    def _provision(self, client: TogetherClient, spec: ClusterSpec) -> Cluster:
        created = self._post(client, spec)
        _say(f"cluster {spec.cluster_name!r}: created {created.cluster_id}")
        try:
            return client.wait_until_ready(
                created.cluster_id,
                timeout=require_known("ready_timeout_seconds", spec.ready_timeout_seconds),
                on_status=lambda c: _say(f"cluster {c.cluster_name!r}: {c.status}"),
                known=created,
            )
        except TogetherError as failure:
            # A definite failure: never leave a half-created, billed cluster behind. Anything else
            # (the process being stopped, say) leaves the cluster for the duplicate guard to
            # report on the next `up`, where the user can adopt it.
            _say(
                f"cluster {spec.cluster_name!r}: provisioning failed; deleting {created.cluster_id}"
            )
            self._delete_quietly(client, created.cluster_id)
            raise ProvisioningFailedError(
                f"cluster {spec.cluster_name!r}: {failure.message}; cluster "
                f"{created.cluster_id} was deleted so nothing is left billing",
                cluster_id=created.cluster_id,
                fix=failure.fix,
            ) from failure

    def _delete_quietly(self, client: TogetherClient, cluster_id: str) -> None:
        with suppress(TogetherError):
            try:
                client.delete_cluster(cluster_id)
            except NotFoundError:
                return
            client.wait_until_deleted(cluster_id, timeout=DELETE_TIMEOUT_SECONDS)

    def _adopt(self, client: TogetherClient, spec: ClusterSpec, cluster_id: str) -> Cluster:
        """Take over a cluster created outside Pulumi (`pulumi import` cannot, #16175)."""
        try:
            cluster = client.get_cluster(cluster_id)
        except NotFoundError as missing:
            raise SpecError(
                f"cluster {spec.cluster_name!r}: adopt_cluster_id={cluster_id!r} does not exist",
                field="adopt_cluster_id",
                fix="use an id from `tg clusters list`, or remove adopt_cluster_id to create",
            ) from missing
        mismatches = mapping.identity_mismatches(spec, cluster)
        if mismatches:
            raise SpecError(
                f"cluster {spec.cluster_name!r}: cannot adopt {cluster_id}, its immutable fields "
                f"differ from the spec ({'; '.join(mismatches)})",
                field="adopt_cluster_id",
                fix="make the spec match the existing cluster, then change it in a later update",
            )
        live = {
            "num_gpus": cluster.num_gpus,
            "num_preemptible_gpus": cluster.desired_preemptible_gpus,
        }
        wanted = {"num_gpus": spec.num_gpus, "num_preemptible_gpus": spec.num_preemptible_gpus}
        changes = {key: require_known(key, v) for key, v in wanted.items() if v != live[key]}
        if changes:
            cluster = client.update_cluster(cluster_id, mapping.update_request(changes))
        _say(f"cluster {spec.cluster_name!r}: adopted {cluster_id}")
        if "num_gpus" in changes or not cluster.is_ready:
            cluster = client.wait_until_ready(
                cluster_id,
                timeout=require_known("ready_timeout_seconds", spec.ready_timeout_seconds),
            )
        return cluster

    # ------------------------------------------------------------------ update

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        plan = rules.plan(_inputs(olds), _inputs(news))
        spec = _spec(news)
        inputs = to_props(spec)
        if not plan.update:
            # Only provider-side settings changed: no API call, keep the last known state.
            kept = {k: v for k, v in _inputs(olds).items() if k in mapping.OUTPUT_FIELDS}
            return UpdateResult({**kept, **inputs})
        with self._client() as client:
            cluster = client.update_cluster(id_, mapping.update_request(plan.update))
            _say(f"cluster {spec.cluster_name!r}: updated {', '.join(sorted(plan.update))}")
            if "num_gpus" in plan.update:
                cluster = client.wait_until_ready(
                    id_,
                    timeout=require_known("ready_timeout_seconds", spec.ready_timeout_seconds),
                    on_status=lambda c: _say(f"cluster {c.cluster_name!r}: {c.status}"),
                )
        return UpdateResult(mapping.outputs(inputs, cluster))

    # ------------------------------------------------------------------ read / delete

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        with self._client() as client:
            try:
                cluster = client.get_cluster(id_)
            except NotFoundError:
                return ReadResult(None, {})
        if cluster.is_deleting:
            return ReadResult(None, {})
        live = mapping.live_inputs(_inputs(props), cluster)
        return ReadResult(id_, mapping.outputs(live, cluster), live)

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        with self._client() as client:
            try:
                client.delete_cluster(id_)
            except NotFoundError:
                return
            client.wait_until_deleted(id_, timeout=DELETE_TIMEOUT_SECONDS)
