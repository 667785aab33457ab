"""Finding a node the way Senlin clients name one: by id, name, or a unique short id."""

from __future__ import annotations

from shoal.service.errors import NotFound
from shoal.service.senlin.errors import BadRequest
from shoal.service.senlin.member_names import joined_pattern, known_name
from shoal.store import nodes as node_repo
from shoal.store import senlin_nodes as senlin_node_repo
from shoal.store.records import NodeRecord, Principal
from shoal.store.senlin_conn import Conn


def find_node(conn: Conn, who: Principal, ref: str) -> NodeRecord:
    scope = None if who.is_admin else who.project_id
    node = node_repo.get_node(conn, ref, scope)
    if node is None or node.deleted_at is not None:
        found = senlin_node_repo.named_or_prefixed(conn, scope, ref, joined_pattern(ref))
        matches = [
            n for n in found if n.name == ref or n.id.startswith(ref) or known_name(n) == ref
        ]
        if len(matches) > 1:
            raise BadRequest(
                f"Multiple results found matching the query criteria '{ref}'. "
                "Please be more specific."
            )
        node = matches[0] if matches else None
    if node is None:
        raise NotFound(f"The node '{ref}' could not be found.")
    return node
