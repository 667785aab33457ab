"""Senlin v1 semantics over Shoal's own model, for the `/clustering` façade.

A Senlin cluster is a Shoal cluster with one node group, named after the cluster, built from a
Senlin profile. What Senlin keeps and Shoal has no column for (the profile id, timeout, config,
metadata that is not text) rides in the cluster document's `metadata` under `senlin.` keys
(`meta.py`); Senlin-created profiles are stored as an envelope holding Senlin's own spec
(`specs.py`), translated to a native profile whenever a cluster uses them.
"""
