#!/usr/bin/env bash
# Negative controls of tools/oracle/check_goldens.py: each passes only when the oracle exits 1 with a
# FAIL line naming what was broken (exit 0 would mean it sees nothing, exit 2 that it never compared).
#   negative_controls.sh MLASIM fault FAULT [SCENARIO|DIR ...]   mlasim's fp32 run with FAULT injected
#   negative_controls.sh MLASIM edited-golden SCENARIO            a copy of the scenario's golden with its
#                                                                 first row's largest logit off by 1e-3 relative
# The golden folder is named after the scenario file (golden/<stem>/). PYTHON picks the interpreter
# (default python3; it needs numpy).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
[[ $# -ge 3 ]] || { sed -n '2,8p' "$0" >&2; exit 2; }
mlasim=$1 mode=$2
shift 2

# Runs the oracle with "$@" and passes when it exits 1 with a FAIL line matching $expect.
expect_failure() {
  local out rc=0
  out=$("$python" "$here/check_goldens.py" --mlasim "$mlasim" "$@" 2>&1) || rc=$?
  printf '%s\n' "$out"
  if [[ $rc -ne 1 ]] || ! grep -q -- "^FAIL .*$expect" <<<"$out"; then
    echo "negative control: expected exit 1 and a FAIL line matching '$expect', got exit $rc" >&2
    exit 1
  fi
  echo "negative control passed: the oracle exits 1 and names the failure"
}

case $mode in
  fault)
    fault=$1
    shift
    expect="mlasim fp32 run --inject $fault vs the oracle's "
    expect_failure --inject "$fault" "$@"
    ;;
  edited-golden)
    scenario=$1
    name=$(basename "$scenario" .yaml)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    cp -r "$here/../../golden/$name" "$tmp/$name"
    # Scale one value by 1 + 1e-3 and re-bind the index to the new bytes, so that only the value differs.
    token=$("$python" -B - "$tmp/$name" "$here" <<'EOF'
import json, sys
from pathlib import Path
import numpy as np
folder = Path(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from check_goldens import fnv1a64
logits = np.load(folder / "logits.npy")
token = int(np.argmax(np.abs(logits[0])))
logits[0, token] *= np.float32(1 + 1e-3)
np.save(folder / "logits.npy", logits)
index = json.loads((folder / "logits_index.json").read_text())
index["logits_npy_fnv1a64"] = fnv1a64((folder / "logits.npy").read_bytes())
(folder / "logits_index.json").write_text(json.dumps(index, indent=2))
print(token)
EOF
)
    expect="golden $tmp/$name vs the oracle's .* token $token:"
    expect_failure --golden-dir "$tmp" "$scenario"
    ;;
  *)
    echo "negative_controls.sh: unknown mode '$mode' (fault or edited-golden)" >&2
    exit 2
    ;;
esac
