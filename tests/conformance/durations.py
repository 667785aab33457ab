"""Where a tempest run's time goes: the slowest test classes and tests, from the subunit stream.

Usage: python durations.py LAST.subunit [N]   (N: how many of each to list, default 15)
A class's time runs from its first record's start to its last record's end, so it includes its
setUpClass/tearDownClass (where the plugin's 5 s status polls of shared clusters sit). The sum of
class times over the run's wall time is the concurrency the run actually achieved.
"""

import collections
import re
import sys

import subunit
import testtools

stream_path = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
tests: list[dict] = []
with open(stream_path, "rb") as f:
    result = testtools.StreamToDict(tests.append)
    result.startTestRun()
    subunit.ByteStreamToStreamResult(f, non_subunit_name="stdout").run(result)
    result.stopTestRun()

spans: dict[str, list] = collections.defaultdict(list)
workers: dict[str, list] = collections.defaultdict(list)
per_test = []
for t in tests:
    start, end = t["timestamps"]
    if start is None or end is None or t["status"] == "exists":
        continue
    for tag in t["tags"]:
        if tag.startswith("worker-"):
            workers[tag].append((start, end))
    m = re.match(r"^(?:setUpClass|tearDownClass) \((.*)\)$", t["id"])
    cls = m.group(1) if m else re.sub(r"\[.*\]$", "", t["id"]).rsplit(".", 1)[0]
    spans[cls].append((start, end))
    if not m:
        per_test.append(((end - start).total_seconds(), t["id"]))
if not spans:
    sys.exit("no timed records")
classes = sorted(
    ((max(e for _, e in s) - min(b for b, _ in s)).total_seconds(), c) for c, s in spans.items()
)
first = min(b for s in spans.values() for b, _ in s)
last = max(e for s in spans.values() for _, e in s)
wall = (last - first).total_seconds()
busy = sum(d for d, _ in classes)
short = "senlin_tempest_plugin.tests.api."
print(
    f"wall {wall:.0f}s; class time {busy:.0f}s over {len(classes)} classes "
    f"(achieved concurrency {busy / wall:.1f})"
)
# A worker that ends long before another shows stestr's partition (by the test times of the
# last run, which run.sh keeps in CONF_CACHE) was unbalanced.
for w, s in sorted(workers.items()):
    ends = (max(e for _, e in s) - first).total_seconds()
    print(f"  {w}: {len(s)} records, done at {ends:.0f}s")
print(f"slowest {top} classes:")
for d, c in classes[::-1][:top]:
    print(f"  {d:6.1f}s  {c.removeprefix(short)}")
print(f"slowest {top} tests:")
for d, tid in sorted(per_test)[::-1][:top]:
    name = re.sub(r"\[.*\]$", "", tid).removeprefix(short)
    print(f"  {d:6.1f}s  {name}")
