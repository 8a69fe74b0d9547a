#!/usr/bin/env bash
# Exit 3 for every output kind, on any machine and without privileges: each command runs under a
# file-size limit (`ulimit -f`) with SIGXFSZ ignored, so its write() fails with EFBIG as it would
# on a full disk. Each must exit 3, name the file and the real cause ("File too large") with a hint
# about the limit (not "check that the directory exists"), publish nothing and leave the files that
# were there as they were. (The full-disk case on a tmpfs, where mounting is allowed, is in
# test_golden_files.sh.)
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
scenario="$root/scenarios/seed/lone_one_token_prompt.yaml"
name=lone_one_token_prompt
long=(--set requests.0.max_tokens=400 --set expect.num_steps=400 --table none)

limited() {  # limited KIB COMMAND...: COMMAND with files capped at KIB KiB and SIGXFSZ ignored
  local kib=$1
  shift
  (
    trap '' XFSZ
    ulimit -f "$kib"
    exec "$@"
  )
}
efbig() {  # efbig NAME FILE: the output of the last check reports FILE's EFBIG with its hint
  contains "$1" "$2"
  contains "$1" "File too large"
  contains "$1" "ulimit -f"
  not_contains "$1" "exists and is writable"
  not_contains "$1" "Success"
}
unchanged() {  # unchanged NAME FILE: FILE still holds "old"
  [[ $(cat "$2" 2>/dev/null) == old ]] || { echo "FAIL $1: $2 was replaced or removed"; fail=1; }
}
no_leftovers() {  # no_leftovers NAME DIR: no temporary or staging file left in DIR
  local left
  left=$(ls -A "$2" | grep -E '\.tmp\.|\.new\.|\.old\.')
  [[ -z $left ]] || { echo "FAIL $1: leftovers in $2: $left"; fail=1; }
}
fresh() {  # fresh DIR: an empty DIR
  rm -rf "$1"
  mkdir -p "$1"
}

# mlasim run: each output on its own, the target holding an old file. 64 KiB lets the run's
# temporary request spill through and stops the 400-step outputs.
for kind in json jsonl svg trace-out; do
  d="$scratch/run-$kind"
  fresh "$d"
  echo old >"$d/out"
  check "run --$kind" 3 limited 64 "$mlasim" run "$scenario" --dry-run "${long[@]}" "--$kind" "$d/out"
  efbig "run --$kind" "$d/out"
  unchanged "run --$kind" "$d/out"
  no_leftovers "run --$kind" "$d"
done
d="$scratch/run-logits"
fresh "$d/logits"
echo old >"$d/logits/logits.npy"
echo old >"$d/logits/logits_index.json"
check "run --logits-dir" 3 limited 64 "$mlasim" run "$scenario" "${long[@]}" --logits-dir "$d/logits"
efbig "run --logits-dir" "$d/logits/logits"
unchanged "run --logits-dir" "$d/logits/logits.npy"
unchanged "run --logits-dir" "$d/logits/logits_index.json"
no_leftovers "run --logits-dir" "$d/logits"
# A --logits-dir the run had to create is removed again when nothing was published in it.
d="$scratch/run-logits-new"
fresh "$d"
check "run --logits-dir (new)" 3 limited 64 "$mlasim" run "$scenario" "${long[@]}" --logits-dir "$d/new/logits"
efbig "run --logits-dir (new)" "$d/new/logits/logits"
[[ ! -e $d/new/logits ]] || { echo "FAIL run --logits-dir (new): left $(ls -A "$d/new/logits" | tr '\n' ' ') behind"; fail=1; }
# The run's temporary request file (requests in scenario order for --json) under a 1 KiB limit:
# exit 3 with the cause, not an abort.
d="$scratch/run-spill"
fresh "$d"
echo old >"$d/out.json"
check "run --json, spill" 3 limited 1 "$mlasim" run "$scenario" --dry-run "${long[@]}" --json "$d/out.json"
efbig "run --json, spill" "temporary request file"
not_contains "run --json, spill" "Aborted"
unchanged "run --json, spill" "$d/out.json"
no_leftovers "run --json, spill" "$d"
# A set of outputs is published whole: the SVG fits under the limit, the JSON does not, so
# neither replaces what was there.
d="$scratch/run-set"
fresh "$d"
echo old >"$d/run.json"
echo old >"$d/run.svg"
check "run --json --svg" 3 limited 64 "$mlasim" run "$scenario" --dry-run "${long[@]}" --json "$d/run.json" \
  --svg "$d/run.svg"
efbig "run --json --svg" "$d/run.json"
unchanged "run --json --svg" "$d/run.json"
unchanged "run --json --svg" "$d/run.svg"
no_leftovers "run --json --svg" "$d"

# mlasim check: each report on its own.
for kind in junit json html; do
  d="$scratch/check-$kind"
  fresh "$d"
  echo old >"$d/report"
  check "check --$kind" 3 limited 0 "$mlasim" check "$root/scenarios/seed" --dry-run "--$kind" "$d/report"
  efbig "check --$kind" "$d/report"
  unchanged "check --$kind" "$d/report"
  no_leftovers "check --$kind" "$d"
done

# mlasim golden update: the old golden stays, byte for byte.
fresh "$scratch/g"
cp -r "$root/golden/$name" "$scratch/g/$name"
check "golden update" 3 limited 4 "$mlasim" golden update "$scenario" --golden-dir "$scratch/g"
efbig "golden update" "$scratch/g/$name"
for f in split.txt logits.npy logits_index.json meta.yaml; do
  cmp -s "$scratch/g/$name/$f" "$root/golden/$name/$f" || { echo "FAIL golden update: $f changed"; fail=1; }
done
no_leftovers "golden update" "$scratch/g"

# mlasim golden update of two scenarios is all or nothing: the first golden (6 KiB of logits) is
# staged under the limit, the second (22 KiB) is not, so neither is updated.
other=spec_decode_short_fresh_prompt
fresh "$scratch/g"
cp -r "$root/golden/$name" "$scratch/g/$name"
echo old >"$scratch/g/$name/split.txt"
check "golden update of two" 3 limited 16 "$mlasim" golden update "$scenario" "$root/scenarios/seed/$other.yaml" \
  --golden-dir "$scratch/g"
efbig "golden update of two" "$scratch/g/$other"
contains "golden update of two" "no golden was updated"
unchanged "golden update of two" "$scratch/g/$name/split.txt"
[[ ! -e $scratch/g/$other ]] || { echo "FAIL golden update of two: $other was created"; fail=1; }
no_leftovers "golden update of two" "$scratch/g"

# mlasim fuzz --record-golden: the goldens written before the limit stay whole, and the one that
# did not fit leaves no folder (3 KiB holds some of seed 3's split goldens, not all).
d="$scratch/fuzz-golden"
fresh "$d"
check "fuzz --record-golden" 3 limited 3 "$mlasim" fuzz --seed 3 --runs 200 --record-golden "$d/g"
efbig "fuzz --record-golden" "$d/g/fuzz_3_"
for f in "$d"/g/*; do
  [[ -f $f/split.txt ]] || { echo "FAIL fuzz --record-golden: $f holds no split.txt: $(ls -A "$f")"; fail=1; }
done
no_leftovers "fuzz --record-golden" "$d/g"

# mlasim export: neither file of the old export is replaced.
d="$scratch/export"
fresh "$d"
echo old >"$d/config.json"
echo old >"$d/model.safetensors"
check "export" 3 limited 64 "$mlasim" export "$scenario" -o "$d"
efbig "export" "$d/model.safetensors"
unchanged "export" "$d/config.json"
unchanged "export" "$d/model.safetensors"
no_leftovers "export" "$d"

# mlasim import -o: the scenario and its requests file appear together or not at all.
d="$scratch/import"
fresh "$d"
echo old >"$d/t.yaml"
echo old >"$d/t.jsonl"
check "import -o" 3 limited 0 "$mlasim" import azure "$root/tests/data/traces/azure_sample.csv" -o "$d/t.yaml"
efbig "import -o" "$d/t.jsonl"
unchanged "import -o" "$d/t.yaml"
unchanged "import -o" "$d/t.jsonl"
no_leftovers "import -o" "$d"

[[ $fail -eq 0 ]] && echo "ok: every output kind under a file-size limit is exit 3, names the file and EFBIG, publishes nothing"
exit $fail
