"""The conformance verdict for .ci/conformance.sh, from the suite's own files.

  verdict OUT REQUIREMENTS BASELINE MATCHED  judge each scenario's checks.json:
      a FAILURE in a scored scenario must be baselined (exit 1 otherwise);
      matched baseline entries are appended to MATCHED; warnings are printed.
  scored LOG REQUIREMENTS  one line: scored scenarios clean, checks passed/failed.
  stale BASELINE MATCHED   print baseline entries that matched in no revision.

Scored = the requirement set's `server:` list.
"""
import json
import os
import re
import sys


def scored_set(path):
    required, section = set(), None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^([a-z_]+):", line)
        if m:
            section = m.group(1)
        elif section == "server":
            m = re.match(r"^\s+-\s+([\w-]+)", line)
            if m:
                required.add(m.group(1))
    return required


def baseline_entries(path):
    entries = []
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^\s+-\s+([\w:.-]+)", line)
        if m:
            entries.append(m.group(1))
    return entries


def verdict(out, req, baseline, matched_path):
    entries = set(baseline_entries(baseline))
    scored = scored_set(req)
    matched, unexpected, warnings = set(), [], []
    for folder in sorted(os.listdir(out)):
        path = os.path.join(out, folder, "checks.json")
        if not os.path.isfile(path):
            continue
        name = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", folder[len("server-"):])
        for check in json.load(open(path, encoding="utf-8")):
            status, cid = check.get("status"), check.get("id", "?")
            if status == "WARNING":
                warnings.append(f"{name}:{cid}")
            if status != "FAILURE" or name not in scored:
                continue
            hit = {name, f"{name}:{cid}"} & entries
            if hit:
                matched |= hit
            else:
                unexpected.append(f"{name}:{cid}: {check.get('errorMessage', '')}"[:300])
    with open(matched_path, "a", encoding="utf-8") as f:
        for m in sorted(matched):
            f.write(m + "\n")
    for w in warnings:
        print(f"warning (not failing): {w}")
    for u in unexpected:
        print(f"unexpected failure: {u}")
    return 1 if unexpected else 0


def scored_line(log, req):
    text = open(log, encoding="utf-8").read()
    summary = text.split("=== SUMMARY ===", 1)[-1]
    rows = re.findall(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed$", summary, re.M)
    required = scored_set(req)
    scored = [r for r in rows if r[1] in required]
    ok = sum(1 for r in scored if r[0] == "✓")
    print(f"scored: {ok}/{len(scored)} scenarios clean, "
          f"{sum(int(r[2]) for r in scored)} checks passed, {sum(int(r[3]) for r in scored)} failed")
    return 0


def stale(baseline, matched_path):
    matched = set()
    if os.path.isfile(matched_path):
        matched = set(open(matched_path, encoding="utf-8").read().split())
    for entry in baseline_entries(baseline):
        if entry not in matched:
            print(entry)
    return 0


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    sys.exit({"verdict": verdict, "scored": scored_line, "stale": stale}[command](*args))
