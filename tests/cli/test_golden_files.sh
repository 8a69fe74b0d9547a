#!/usr/bin/env bash
# Corrupted goldens as `mlasim check` meets them: every malformed file is exit 2 naming the file and
# the field (npy shapes that overflow or have 3 dimensions, a deeply nested or wrong-format
# logits_index.json, a missing, garbage or edited meta.yaml, a split.txt header of another format);
# a golden of another scenario, a stale one or one of another model is exit 1 with the reason;
# a logits pair from two writes is refused; golden update recovers from a killed update; a full
# disk (a small tmpfs, where mounting is allowed) is exit 3 with nothing published.
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
scenario="$root/scenarios/seed/lone_one_token_prompt.yaml"
name=lone_one_token_prompt
fresh() {  # a pristine copy of the golden in $scratch/g/$name
  rm -rf "$scratch/g"
  mkdir -p "$scratch/g"
  cp -r "$root/golden/$name" "$scratch/g/$name"
  g="$scratch/g/$name"
}
golden_check() {  # golden_check NAME RC NEEDLE
  check "$1" "$2" "$mlasim" check "$scenario" --golden-dir "$scratch/g"
  contains "$1" "$3"
  not_contains "$1" "terminate called"
}
# npy_with_shape SHAPE: logits.npy with the golden's data under a header of another shape.
npy_with_shape() {
  local header="{'descr': '<f4', 'fortran_order': False, 'shape': $1, }"
  local pad=$(( (64 - (10 + ${#header} + 1) % 64) % 64 ))
  header="$header$(printf '%*s' "$pad" '')"
  local len=$(( ${#header} + 1 ))
  local hl
  hl=$(od -An -tu2 -j8 -N2 "$g/logits.npy" | tr -d ' ')
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))"
    printf '%s\n' "$header"; tail -c +$((11 + hl)) "$g/logits.npy"; } >"$g/logits.npy.new"
  mv "$g/logits.npy.new" "$g/logits.npy"
}

fresh
golden_check "pristine golden" 0 "PASS $name"

fresh; npy_with_shape "(4, 1099511627775)"
golden_check "npy shape beyond the file" 2 "$g/logits.npy: error: data: expected 17592186044400 data bytes for shape (4, 1099511627775), found 6144"
fresh; npy_with_shape "(4, 4611686018427388416)"
golden_check "npy shape whose product wraps" 2 "$g/logits.npy: error: shape: expected a 1-D or 2-D shape of whole numbers, got (4, 4611686018427388416)"
fresh; npy_with_shape "(4, 512 + 4611686018427387904)"
golden_check "npy shape that is not numbers" 2 "$g/logits.npy: error: shape: expected a 1-D or 2-D shape of whole numbers"
fresh; npy_with_shape "(3, 512, 1)"
golden_check "3-D npy" 2 "$g/logits.npy: error: shape: expected a 1-D or 2-D shape of whole numbers, got (3, 512, 1)"

fresh; { printf '{"rows": '; head -c 100000 /dev/zero | tr '\0' '['; } >"$g/logits_index.json"
golden_check "deeply nested index" 2 "$g/logits_index.json:1:73: error: invalid JSON: nested deeper than 64 levels"
fresh; sed -i 's/"mlasim-logits-index"/"other"/' "$g/logits_index.json"
golden_check "index format" 2 "$g/logits_index.json: error: format: expected \"mlasim-logits-index\""
fresh; sed -i 's/"version": 1/"version": 2/' "$g/logits_index.json"
golden_check "index version" 2 "$g/logits_index.json: error: version: expected version 1"
fresh; sed -i 's/"vocab_size": 512/"vocab_size": 511/' "$g/logits_index.json"
golden_check "index vocab_size" 2 "$g/logits_index.json: error: vocab_size: expected 512, the columns of logits.npy"
fresh; sed -i '0,/"step": 1,/s//"step": 1.5,/' "$g/logits_index.json"
golden_check "fractional step" 2 "$g/logits_index.json: error: rows[1]: needs step and position (whole numbers >= 0) and id (a string)"

fresh; rm "$g/meta.yaml"
golden_check "meta.yaml missing" 2 "$g/meta.yaml: error: cannot read the golden's meta.yaml"
fresh; printf '%s\n' '{[}' >"$g/meta.yaml"
golden_check "meta.yaml garbage" 2 "$g/meta.yaml:"
contains "meta.yaml garbage" "error: not YAML"
fresh; sed -i '0,/abs: 0.0001/s//abs: 0.5/' "$g/meta.yaml"
golden_check "meta.yaml tolerance edited" 2 "$g/meta.yaml:22:10: error: tolerances.fp32.abs: expected 0.0001, found 0.5 (tolerances are mlasim's; an edited meta.yaml changes nothing and is refused)"
fresh; sed -i 's/^rows: 3/rows: 4/' "$g/meta.yaml"
golden_check "meta.yaml rows" 2 "$g/meta.yaml:13:7: error: rows: expected 3, found 4"
fresh; sed -i 's/^model_hash: .*/model_hash: 0000000000000000/' "$g/meta.yaml"
golden_check "golden of another model" 1 "$g/meta.yaml:5: the logits golden was written for another model (model_hash 0000000000000000"

fresh; sed -i '1s/format 1/format 9/' "$g/split.txt"
golden_check "split format line" 2 "$g/split.txt:1: error: not an mlasim split golden of format 1 (the first line is \"# mlasim split golden, format 9\")"
fresh; sed -i 's/^# scenario: .*/# scenario: other/' "$g/split.txt"
golden_check "split of another scenario" 1 "$g/split.txt:2: the golden is scenario \"other\"'s, not \"$name\"'s"
# A golden of an older version of the scenario: both files carry its fingerprint.
fresh; sed -i 's/^# fingerprint: .*/# fingerprint: 0000000000000000/' "$g/split.txt"
sed -i 's/^fingerprint: .*/fingerprint: 0000000000000000/' "$g/meta.yaml"
golden_check "stale split golden" 1 "$g/split.txt:3: the golden is stale: the scenario changed since it was written"
# One file's fingerprint edited: the two are not from one update.
fresh; sed -i 's/^fingerprint: .*/fingerprint: 0000000000000000/' "$g/meta.yaml"
golden_check "meta.yaml fingerprint edited" 2 "$g/meta.yaml:4:14: error: fingerprint: 0000000000000000 differs from $g/split.txt's"
contains "meta.yaml fingerprint edited" "the two files are from different updates (or one was edited)"
fresh; { head -5 "$g/split.txt"; head -c $((17 << 20)) /dev/zero | tr '\0' 'x'; } >"$g/split.txt.new"; mv "$g/split.txt.new" "$g/split.txt"
golden_check "split line without end" 2 "$g/split.txt:6: error: a line longer than 16 MiB"

# logits.npy and logits_index.json are one set: a pair from two writes is refused.
fresh
"$mlasim" run "$scenario" --inject kv_norm_dropped --table none --golden-dir "$scratch/none" \
  --logits-dir "$scratch/faulty" >/dev/null
cp "$scratch/faulty/logits.npy" "$g/logits.npy"
golden_check "npy and index from two writes" 2 "$g/logits_index.json: error: logits_npy_fnv1a64: the index belongs to another logits.npy"

# golden update: leftovers of killed updates are cleaned up; an old golden moved aside comes back.
fresh
mv "$g" "$scratch/g/.$name.old.999999999"
mkdir "$scratch/g/.$name.new.999999998"
check "golden update after a kill" 0 "$mlasim" golden update "$scenario" --golden-dir "$scratch/g"
[[ -f $g/split.txt && -f $g/logits.npy ]] || { echo "FAIL golden update did not leave a golden"; fail=1; }
[[ -z $(ls -A "$scratch/g" | grep -v "^$name\$") ]] || { echo "FAIL leftovers remain: $(ls -A "$scratch/g")"; fail=1; }
cmp -s "$g/logits.npy" "$root/golden/$name/logits.npy" || { echo "FAIL the updated golden differs from the committed one"; fail=1; }
golden_check "the updated golden passes" 0 "PASS $name"

# A full disk is exit 3, not bad input: nothing is published and what was there stays.
mnt="$scratch/full"
mkdir -p "$mnt"
if mount -t tmpfs -o size=64k tmpfs "$mnt" 2>/dev/null; then
  printf 'old\n' >"$mnt/run.json"
  check "run onto a full disk" 3 "$mlasim" run "$scenario" --set requests.0.max_tokens=400 --set expect.num_steps=400 \
    --table none --json "$mnt/run.json" --logits-dir "$mnt/logits"
  contains "run onto a full disk" "No space left on device"
  not_contains "run onto a full disk" "Success"
  [[ $(cat "$mnt/run.json") == old ]] || { echo "FAIL the old run.json was replaced"; fail=1; }
  [[ -z $(ls -A "$mnt/logits" 2>/dev/null) ]] || { echo "FAIL logits were published: $(ls -A "$mnt/logits")"; fail=1; }
  ls -A "$mnt" | grep -q '\.tmp\.' && { echo "FAIL a temporary file was left: $(ls -A "$mnt")"; fail=1; }
  cp -r "$root/golden/$name" "$mnt/$name"
  head -c 40000 /dev/zero >"$mnt/filler"
  check "golden update onto a full disk" 3 "$mlasim" golden update "$scenario" --golden-dir "$mnt"
  not_contains "golden update onto a full disk" "Success"
  cmp -s "$mnt/$name/logits.npy" "$root/golden/$name/logits.npy" || { echo "FAIL the old golden was lost"; fail=1; }
  [[ -z $(ls -A "$mnt" | grep -v "^$name\$" | grep -v "^filler\$" | grep -v "^run.json\$" | grep -v "^logits\$") ]] \
    || { echo "FAIL leftovers on the full disk: $(ls -A "$mnt")"; fail=1; }
  check "export onto a full disk" 3 "$mlasim" export "$scenario" -o "$mnt/export"
  not_contains "export onto a full disk" "Success"
  contains "export onto a full disk" "$mnt/export: error: the export needs"  # checked before the weights are drawn
  [[ ! -e $mnt/export ]] || { echo "FAIL export left its folder: $(ls -A "$mnt/export" | tr '\n' ' ')"; fail=1; }
  umount "$mnt"
  # A read-only file system is exit 3 with its name, for a folder to create and for a file.
  if mount -t tmpfs -o ro,size=64k tmpfs "$mnt" 2>/dev/null; then
    check "fuzz -o onto a read-only file system" 3 "$mlasim" fuzz --seed 3 --runs 300 \
      --set engine.profile=vllm-current --set engine.attention_backend=flashinfer-mla -o "$mnt/found"
    contains "fuzz -o onto a read-only file system" "$mnt/found: error: cannot create the folder: Read-only file system"
    contains "fuzz -o onto a read-only file system" "the file system is read-only"
    check "run --json onto a read-only file system" 3 "$mlasim" run "$scenario" --dry-run --json "$mnt/run.json"
    contains "run --json onto a read-only file system" "Read-only file system"
    check "export onto a read-only file system" 3 "$mlasim" export "$scenario" -o "$mnt/export"
    contains "export onto a read-only file system" "is on a read-only file system"
    umount "$mnt"
  fi
else
  echo "note: cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN): the full-disk cases are not run"
fi

[[ $fail -eq 0 ]] && echo "ok: corrupted goldens give exit 1 or 2 naming the file and field; updates recover; a full disk is exit 3"
exit $fail
