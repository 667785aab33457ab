"""Running one node-level action against the provider, with retries and a time limit.

The result is a value (`NodeOutcome`): what to write to the action and the node. The engine
batches those writes; nothing here touches the database except reading the provider ids an
attach needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from shoal.clock import Clock
from shoal.engine.contracts import AttachInputs, DeleteInputs, NodeInputs, NodeOutputs, NodeUpdate
from shoal.engine.profiles import profile_from_row
from shoal.frozen_twin import become, check_twin
from shoal.model.enums import ActionKind, ActionStatus, NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.profile import ServerProfile, VolumeProfile
from shoal.providers.base import (
    Provider,
    Resource,
    ServerGroupHint,
    ServerRequest,
    VolumeRequest,
)
from shoal.providers.errors import PermanentError, ProviderError, ResourceGone, TemporaryError
from shoal.providers.networking import ServerNetworking
from shoal.store.records import ActionRecord
from shoal.telemetry import metrics

T = TypeVar("T")


@dataclass(slots=True)
class NodeOutcome:
    action: ActionRecord
    status: ActionStatus
    reason: str = ""
    outputs: NodeOutputs = field(default_factory=NodeOutputs)
    node_update: NodeUpdate | None = None
    """Columns to set on the action's node (empty: leave the node alone)."""
    node_message: str = ""


@dataclass(slots=True)
class RetryPolicy:
    attempts: int = 3
    backoff_s: float = 1.0
    call_timeout_s: float = 900.0


class _Limit:
    """One provider call's time limit: the task making the call, cancelled when it passes,
    as `asyncio.timeout` does (the same `cancelling()` count, the same `uncancel`)."""

    __slots__ = ("cancelling", "expired", "task")

    def __init__(self, task: asyncio.Task[object]) -> None:
        self.task = task
        self.cancelling = task.cancelling()
        self.expired = False


class _Deadlines:
    """The time limits of one event loop's provider calls: one timer per second in which
    deadlines fall, shared by the calls due then, so a call's limit may pass up to a second
    late. Issue 23: a timer of each call's own (`wait_for`'s, with a second task, or
    `asyncio.timeout`'s) kept thousands of entries in the loop's timer heap, each pushed
    through Python comparisons: a tenth of the engines' CPU in a 10,000-node create. And
    `asyncio.timeout`'s context itself (its object, `current_task`, its state checks) cost
    3.4 µs per call; a `_Limit` costs under 1."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.due: dict[int, set[_Limit]] = {}

    def watch(self, limit: _Limit, seconds: float) -> int:
        """Cancel `limit`'s task `seconds` from now, unless `done` comes first."""
        slot = math.ceil(self.loop.time() + seconds)
        calls = self.due.get(slot)
        if calls is None:
            calls = self.due[slot] = set()
            self.loop.call_at(slot, self._expire, slot)
        calls.add(limit)
        return slot

    def done(self, limit: _Limit, slot: int) -> None:
        calls = self.due.get(slot)
        if calls is not None:
            calls.discard(limit)

    def _expire(self, slot: int) -> None:
        for limit in self.due.pop(slot, ()):
            limit.expired = True
            limit.task.cancel()  # a TimeoutError in `_with_retries`


_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Deadlines] = (
    weakref.WeakKeyDictionary()
)
_last: _Deadlines | None = None
"""The last loop's deadlines (an engine runs one loop): issue 23, the WeakKeyDictionary's
lookup builds a weakref per call, 6 % of a node action's CPU; an identity check does not."""


def _deadlines() -> _Deadlines:
    global _last
    loop = asyncio.get_running_loop()
    last = _last
    if last is not None and last.loop is loop:
        return last
    found = _by_loop.get(loop)
    if found is None:
        found = _by_loop[loop] = _Deadlines(loop)
    _last = found
    return found


async def _with_retries(
    call: Callable[[], Awaitable[T]], policy: RetryPolicy, clock: Clock, meter: tuple[str, str]
) -> T:
    """`meter`: (provider service, operation), the labels of issue 27's provider-call metrics."""
    attempt = 0
    deadlines = _deadlines()  # one lookup per action (issue 23), not two per try
    task = asyncio.current_task(deadlines.loop)
    assert task is not None
    while True:
        attempt += 1
        started = time.perf_counter()
        # `call()`, a TimeoutError when it takes more than about `call_timeout_s`, as with
        # `asyncio.timeout`. Issue 23: here, not in a coroutine of its own (one per try, and a
        # frame more to resume at each of the call's waits).
        limit = _Limit(task)
        slot = deadlines.watch(limit, policy.call_timeout_s)
        try:
            try:
                answer = await call()
            except asyncio.CancelledError as e:
                if limit.expired:
                    limit.expired = False
                    if task.uncancel() <= limit.cancelling:  # ours, and no one else's is pending
                        raise TimeoutError from e
                raise
            finally:
                deadlines.done(limit, slot)
                if limit.expired:  # the call ended some other way after its limit passed
                    task.uncancel()
        except TimeoutError as e:
            metrics.provider_call(*meter, e, time.perf_counter() - started)
            err: ProviderError = TemporaryError(
                f"the provider did not answer within {policy.call_timeout_s:g} s"
            )
        except Exception as e:
            metrics.provider_call(*meter, e, time.perf_counter() - started)
            if not isinstance(e, TemporaryError):
                raise
            err = e
        else:
            metrics.provider_call(*meter, None, time.perf_counter() - started)
            return answer
        if attempt >= policy.attempts:
            raise err
        await clock.sleep(policy.backoff_s * 2 ** (attempt - 1))


async def run_node_action(
    action: ActionRecord,
    provider: Provider,
    inventory: Inventory,
    policy: RetryPolicy,
    clock: Clock,
    provider_ids: Callable[[list[str]], Awaitable[dict[str, str | None]]],
    networking: ServerNetworking | None = None,
) -> NodeOutcome:
    """Do what `action` asks; provider failures become a FAILED outcome, never an exception.
    `networking`: a server create's own ports and floating IPs (engine/networks.py)."""
    try:
        if action.kind is ActionKind.NODE_CREATE:
            return await _create(action, provider, inventory, policy, clock, networking)
        if action.kind is ActionKind.NODE_DELETE:
            return await _delete(action, provider, policy, clock)
        if action.kind is ActionKind.NODE_ATTACH:
            return await _attach(action, provider, policy, clock, provider_ids)
        if action.kind in (ActionKind.NODE_REBOOT, ActionKind.NODE_REBUILD):
            return await _in_place(action, provider, inventory, policy, clock)
        return NodeOutcome(action, ActionStatus.SUCCEEDED)
    except ProviderError as e:
        reason = str(e) + (f" ({e.fault})" if e.fault else "")
        update = None
        if action.kind is not ActionKind.BARRIER and action.node_id:
            update = NodeUpdate(NodeStatus.ERROR, reason)
        return NodeOutcome(
            action, ActionStatus.FAILED, reason, node_update=update, node_message=reason
        )


async def _create(
    action: ActionRecord,
    provider: Provider,
    inventory: Inventory,
    policy: RetryPolicy,
    clock: Clock,
    networking: ServerNetworking | None = None,
) -> NodeOutcome:
    i = NodeInputs.from_json(action.inputs)
    assert action.node_id is not None
    # A node without a cluster (a Senlin standalone node) is grouped under its project.
    owner = action.cluster_id or f"standalone-{action.project_id}"
    profile = profile_from_row(i.profile, inventory)
    name = i.resource_name
    host, zone = i.host or "", i.zone or ""
    resource: Resource
    if isinstance(profile, ServerProfile):
        # Only the first try of an action never claimed before can be sure nothing was made.
        first = _server_request(
            action.node_id,
            name,
            owner,
            host,
            zone,
            profile,
            i.server_group,
            action.attempts <= 1 and not i.existing,  # fresh
            i.metadata_url,  # issue 11: set by the deployer for agents
            networking,  # issue 26: its ports, made before it boots
        )
        tries = [first]

        def create() -> Awaitable[Resource]:
            # Issue 23: the retries' request (never fresh) is made only when there is a retry.
            request = tries.pop() if tries else dataclasses.replace(first, fresh=False)
            return provider.create_server(request)

        resource = await _with_retries(create, policy, clock, (provider.name, "create_server"))
    else:
        assert isinstance(profile, VolumeProfile)
        vreq = VolumeRequest(action.node_id, name, owner, host, zone, profile)
        resource = await _with_retries(
            lambda: provider.create_volume(vreq), policy, clock, (provider.name, "create_volume")
        )
    rid, address = resource.id, resource.address
    where = f" at {address}" if address else ""
    return NodeOutcome(  # by position: action, status, reason, outputs, node_update, message
        action,
        ActionStatus.SUCCEEDED,
        "",
        NodeOutputs.made(rid, address),
        NodeUpdate.running(rid, address),
        f"created on {i.host}{where}",
    )


class _ServerRequestSlots:
    """`ServerRequest`'s very slots, set by a plain `__init__` in the fields' order; CPython
    then allows the class change to `ServerRequest` (the same layout), as `store/records`
    does for claimed actions. Justified by `benchmarks/scale.py`'s `create-pg`
    (`shoal.frozen_twin`)."""

    __slots__ = ServerRequest.__slots__

    def __init__(
        self,
        key: str,
        name: str,
        cluster: str,
        host: str,
        zone: str,
        profile: ServerProfile,
        server_group: ServerGroupHint | None,
        fresh: bool,
        metadata_url: str | None,
        ports: tuple[str, ...],
        networking: ServerNetworking | None,
    ) -> None:
        self.key = key
        self.name = name
        self.cluster = cluster
        self.host = host
        self.zone = zone
        self.profile = profile
        self.server_group = server_group
        self.fresh = fresh
        self.metadata_url = metadata_url
        self.ports = ports
        self.networking = networking


check_twin(_ServerRequestSlots, ServerRequest)


def _server_request(
    key: str,
    name: str,
    cluster: str,
    host: str,
    zone: str,
    profile: ServerProfile,
    server_group: ServerGroupHint | None,
    fresh: bool,
    metadata_url: str | None,
    networking: ServerNetworking | None,
) -> ServerRequest:
    """A `ServerRequest` with no ports of its own. Issue 23: once per node created, the frozen
    init's `object.__setattr__` per field cost 2 µs against 0.6 so; frozen as any other."""
    request = _ServerRequestSlots(
        key, name, cluster, host, zone, profile, server_group, fresh, metadata_url, (), networking
    )
    return become(request, ServerRequest)


async def _delete(
    action: ActionRecord, provider: Provider, policy: RetryPolicy, clock: Clock
) -> NodeOutcome:
    i = DeleteInputs.from_json(action.inputs)
    kind = i.kind
    resource_id = i.provider_id
    if resource_id is None and action.cluster_id is not None:
        # The create may have reached the provider without its answer being recorded.
        found = await _with_retries(
            lambda: provider.list_resources(action.cluster_id),
            policy,
            clock,
            (provider.name, "list_resources"),
        )
        resource_id = next((r.id for r in found if r.key == action.node_id), None)
    if resource_id is not None:
        rid = resource_id
        with contextlib.suppress(ResourceGone):
            await _with_retries(
                lambda: provider.delete(kind, rid), policy, clock, (provider.name, "delete")
            )
    return NodeOutcome(
        action,
        ActionStatus.SUCCEEDED,
        node_update=NodeUpdate(NodeStatus.DELETED, deleted_at=clock.now()),
        node_message="deleted",
    )


async def _attach(
    action: ActionRecord,
    provider: Provider,
    policy: RetryPolicy,
    clock: Clock,
    provider_ids: Callable[[list[str]], Awaitable[dict[str, str | None]]],
) -> NodeOutcome:
    assert action.node_id is not None
    i = AttachInputs.from_json(action.inputs)
    server_node = i.server_node_id
    ids = await provider_ids([action.node_id, server_node])
    volume_id, server_id = ids.get(action.node_id), ids.get(server_node)
    if volume_id is None or server_id is None:
        raise PermanentError("the volume or its server has no provider id; was it created?")
    await _with_retries(
        lambda: provider.attach_volume(volume_id, server_id),
        policy,
        clock,
        (provider.name, "attach_volume"),
    )
    return NodeOutcome(
        action,
        ActionStatus.SUCCEEDED,
        outputs=NodeOutputs(server=i.server),
        node_message=f"attached to {i.server}",
    )


async def _in_place(
    action: ActionRecord,
    provider: Provider,
    inventory: Inventory,
    policy: RetryPolicy,
    clock: Clock,
) -> NodeOutcome:
    """Reboot, or rebuild from the node's profile, keeping its id, host and address."""
    i = NodeInputs.from_json(action.inputs)
    server_id = i.provider_id
    if not server_id:
        raise PermanentError("the node has no provider resource to restart")
    sid = str(server_id)
    if action.kind is ActionKind.NODE_REBOOT:
        resource = await _with_retries(
            lambda: provider.reboot(sid), policy, clock, (provider.name, "reboot")
        )
        verb = "rebooted"
    else:
        profile = profile_from_row(i.profile, inventory)
        if not isinstance(profile, ServerProfile):
            raise PermanentError("only servers can be rebuilt")
        resource = await _with_retries(
            lambda: provider.rebuild(sid, profile), policy, clock, (provider.name, "rebuild")
        )
        verb = "rebuilt"
    return NodeOutcome(
        action,
        ActionStatus.SUCCEEDED,
        outputs=NodeOutputs(resource.id, resource.address),
        node_update=NodeUpdate.running(resource.id, resource.address),
        node_message=f"{verb} on {i.host}",
    )
