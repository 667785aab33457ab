"""List every test of a tempest run that did not pass, one line each: id, result, reason.

Usage: python failures.py LAST.subunit TEST_IDS.txt   (TEST_IDS: the run's --list-tests output)
A class whose setUpClass failed counts against each of its listed tests, as summarize.py does.
"""

import re
import sys

import subunit
import testtools

stream_path, list_path = sys.argv[1:3]
tests: list[dict] = []
with open(stream_path, "rb") as f:
    result = testtools.StreamToDict(tests.append)
    result.startTestRun()
    subunit.ByteStreamToStreamResult(f, non_subunit_name="stdout").run(result)
    result.stopTestRun()


def reason(details: dict) -> str:
    for key in ("traceback", "reason"):
        if key in details:
            lines = [x for x in details[key].as_text().strip().splitlines() if x.strip()]
            return lines[-1][:400] if lines else key
    return "(no details)"


per_test, fixtures = {}, {}
for t in tests:
    m = re.match(r"^setUpClass \((.*)\)$", t["id"])
    if m:
        fixtures[m.group(1)] = (t["status"], reason(t["details"]))
    elif t["status"] != "exists":
        per_test[re.sub(r"\[.*\]$", "", t["id"])] = (t["status"], reason(t["details"]))
with open(list_path) as listed:
    ids = listed.read().splitlines()
for line in ids:
    tid = re.sub(r"\[.*\]$", "", line.strip())
    if not tid:
        continue
    status, why = per_test.get(tid) or fixtures.get(tid.rsplit(".", 1)[0], ("missing", ""))
    if status not in ("success", "xfail"):
        print(f"{tid.removeprefix('senlin_tempest_plugin.tests.api.')}  {status}  {why}")
