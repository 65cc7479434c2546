"""Reads xmd's Obsidian front matter samples with PyYAML, a YAML 1.1 reader.

Usage: yaml11_check.py SAMPLES.jsonl

Each line is {"yaml": <front matter text>, "fields": [[key, value], ...]}
(the fields xmd wrote, in order), produced by `XMD_YAML_SAMPLES=<file> cargo test --test
x_render_props front_matter_samples`. YAML 1.1 treats U+0085, U+2028 and
U+2029 as line breaks (a name with them once added keys to the note), so
each sample must load as one mapping equal to its fields. Prints one
PASS/FAIL line.
"""

import json
import sys

import yaml


def main() -> int:
    path = sys.argv[1]
    total = 0
    bad = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            sample = json.loads(line)
            total += 1
            try:
                got = yaml.safe_load(sample["yaml"])
            except yaml.YAMLError as e:
                bad.append(f"line {n}: {e}")
                continue
            want = [tuple(kv) for kv in sample["fields"]]
            if not isinstance(got, dict) or list(got.items()) != want:
                bad.append(f"line {n}: read {got!r}, wrote {want!r}")
    if total == 0:
        print(f"FAIL yaml11: no samples in {path}")
        return 1
    if bad:
        print(f"FAIL yaml11: {len(bad)} of {total} front matters read differently by PyYAML {yaml.__version__}")
        for b in bad[:5]:
            print("  " + b)
        return 1
    print(f"PASS yaml11: {total} front matters read back exactly by PyYAML {yaml.__version__} (YAML 1.1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
