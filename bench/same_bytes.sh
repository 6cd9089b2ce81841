#!/usr/bin/env bash
# Whether a change kept every output byte: the sha256 of every file the example workspace's two demo weeks
# write (releases/, site/, digests/, state/) and of the real pool's release (bench/realpool.py, routed with
# specs/). Run it before and after a refactor and diff the two lists.
#
#   bash bench/same_bytes.sh > /tmp/before.sha256      (on the old commit)
#   bash bench/same_bytes.sh > /tmp/after.sha256 && diff /tmp/before.sha256 /tmp/after.sha256
#
# The tree is the checkout this script is in, as its files are now (committed or not); .venv/ must exist
# (make setup). The real pool needs ../shared/data; without it only the demo's files are listed.
set -euo pipefail
tree=$(cd "$(dirname "$0")/.." && pwd)
py="$tree/.venv/bin/python"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$tree" && { git ls-files -z; git ls-files -z --others --exclude-standard; } | xargs -0 cp -P --parents -t "$work")
export PYTHONPATH="$work"
(
  cd "$work"
  "$py" -m reporter.example data/2026-W26.parquet --rows 202000 --seed 0 --without 190000:200000 --quiet >/dev/null
  SOURCE_DATE_EPOCH=1782734400 "$py" -m reporter.cli route --pool data/2026-W26.parquet \
    --specs examples/demo/specs-2026-W26 --out releases --label 2026-W26 >/dev/null 2>&1
  SOURCE_DATE_EPOCH=1783339200 "$py" -m reporter.cli build --label 2026-W27 >/dev/null 2>&1
  find releases site digests state -type f | grep -v '\.lock$' | sort | xargs sha256sum | sed 's|^|demo |'
)
if [ -d "$tree/../shared/data" ]; then
  "$py" "$tree/bench/realpool.py" >/dev/null
  pool=$(ls "$tree"/bench/.cache/real-25-v*.parquet | tail -1)
  (cd "$work" && SOURCE_DATE_EPOCH=1783339200 "$py" -m reporter.cli route --pool "$pool" --specs specs \
     --out real-releases --json >/dev/null && find real-releases -type f | sort | xargs sha256sum | sed 's|^|real |')
fi
