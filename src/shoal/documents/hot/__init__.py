"""Heat Orchestration Templates (HOT) and environments, read as Shoal cluster documents.

A template is evaluated without a cloud (parameters, conditions, intrinsic functions, nested
templates from the environment's registry or a `files` map) and its servers, volumes,
attachments, server groups and resource groups become a `ClusterSpec`. See docs/hot.md.
"""

from shoal.documents.hot.load import (
    HotResult,
    bundle,
    hot_from_tree,
    is_hot,
    load_hot,
    read_body,
    read_hot,
    read_hot_files,
)

__all__ = [
    "HotResult",
    "bundle",
    "hot_from_tree",
    "is_hot",
    "load_hot",
    "read_body",
    "read_hot",
    "read_hot_files",
]
