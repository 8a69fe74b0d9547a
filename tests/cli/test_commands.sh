#!/usr/bin/env bash
# The mlasim command as a user meets it: help text, version, exit codes.
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"

check help 0 "$mlasim" --help
for cmd in run check route golden export version; do contains "help lists $cmd" "$cmd"; done
for cmd in run check route export version; do
  check "help $cmd" 0 "$mlasim" $cmd --help
  contains "help $cmd has an example" "mlasim $cmd"
done
check "help golden update" 0 "$mlasim" golden update --help
contains "help golden update" "Example: mlasim golden update"
contains "help golden update" "(split.txt, logits.npy, logits_index.json, meta.yaml)"

check version 0 "$mlasim" version
contains version "mlasim "
contains version "commit: "
if ! grep -qxE 'cuda: (yes|no)' <<<"$out"; then echo "FAIL version: no 'cuda: yes|no' line"; fail=1; fi

check "no subcommand" 2 "$mlasim"
check "unknown flag" 2 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --no-such-flag
check "bad --device" 2 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --device tpu
check "bad --tp" 2 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --tp 9
check "missing scenario" 2 "$mlasim" run /nonexistent/scenario.yaml
contains "missing scenario" "/nonexistent/scenario.yaml: error: cannot read the scenario file"
check "bad --set" 2 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --set engine.profile=nope
contains "bad --set" "<--set engine.profile=nope>:1:16: error: engine.profile: unknown engine profile"
check "--set with two YAML documents" 2 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --set $'name=a\n---\nb'
contains "--set with two YAML documents" "error: the value holds more than one YAML document"
check "--set with !!str" 2 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --set 'model.rope_theta=!!str 5'
contains "--set with !!str" 'model.rope_theta: expected a number, got "5" (tagged !!str)'
check "--set inf" 2 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --set model.rms_norm_eps=inf
contains "--set inf" 'model.rms_norm_eps: expected a finite number, got "inf"'

check "run replays the seed scenario" 0 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --dry-run
contains "run replays the seed scenario" "step    0: num_mqa=1 num_mha=0 total_toks=1"
contains "run replays the seed scenario" "hello(q=1,nct=0,P=1)=mqa[fresh-on-decode-path]"
contains "run replays the seed scenario" "fresh prefills on the decode path: 1 (step 0 hello (q=1))"

# --json: byte-identical for the same scenario, written atomically (nothing left beside it).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --dry-run --json "$scratch/a.json" >/dev/null

# A symbolic link loop is named as one (ELOOP), for the scenario and for its requests_file.
ln -s "$scratch/loop_b.yaml" "$scratch/loop_a.yaml"
ln -s "$scratch/loop_a.yaml" "$scratch/loop_b.yaml"
check "scenario link loop" 2 "$mlasim" run "$scratch/loop_a.yaml" --dry-run
contains "scenario link loop" "loop_a.yaml: error: cannot read the scenario file"
contains "scenario link loop" "hint: a symbolic link loop (ELOOP)"
ln -s "$scratch/loop_r2.jsonl" "$scratch/loop_r1.jsonl"
ln -s "$scratch/loop_r1.jsonl" "$scratch/loop_r2.jsonl"
printf 'version: 1\nrequests_file: loop_r1.jsonl\n' >"$scratch/loop_requests.yaml"
check "requests_file link loop" 2 "$mlasim" run "$scratch/loop_requests.yaml" --dry-run
contains "requests_file link loop" "(a symbolic link loop (ELOOP): the links lead back to themselves"
check "check on a link loop" 2 "$mlasim" check "$scratch/loop_a.yaml"
contains "check on a link loop" "error: cannot read this scenario path: a symbolic link loop (ELOOP)"
ln -s "$scratch/nowhere.yaml" "$scratch/dangling.yaml"
check "dangling link" 2 "$mlasim" run "$scratch/dangling.yaml" --dry-run
contains "dangling link" "hint: a broken symbolic link: its target does not exist"

# No output may name an input or another output: refused before anything is written.
seed_yaml="$root/scenarios/seed/lone_one_token_prompt.yaml"
cp "$seed_yaml" "$scratch/own.yaml"
check "--json over the scenario" 2 "$mlasim" run "$scratch/own.yaml" --dry-run --json "$scratch/own.yaml"
contains "--json over the scenario" "own.yaml: error: --json names the scenario file, which this command reads"
cmp -s "$seed_yaml" "$scratch/own.yaml" || { echo "FAIL --json over the scenario: the scenario changed"; fail=1; }
ln -s "$scratch/own.yaml" "$scratch/own_link.yaml"
check "--svg over the scenario by a link" 2 "$mlasim" run "$scratch/own.yaml" --dry-run --svg "$scratch/own_link.yaml"
check "--json and --jsonl one file" 2 "$mlasim" run "$seed_yaml" --dry-run --json "$scratch/p.json" --jsonl "$scratch/../$(basename "$scratch")/p.json"
contains "--json and --jsonl one file" "error: --json and --jsonl name the same file"
check "check --json and --junit one file" 2 "$mlasim" check "$seed_yaml" --json "$scratch/q.json" --junit "$scratch/q.json"
contains "check --json and --junit one file" "error: --junit and --json name the same file"
[[ -e "$scratch/p.json" || -e "$scratch/q.json" ]] && { echo "FAIL a refused output set wrote a file"; fail=1; }

# What cannot reach stdout (a full disk, a closed descriptor) is an output not written: exit 3.
for cmd in "run $seed_yaml --dry-run" "check $seed_yaml" "route --batch 1:0:1" "releases"; do
  # shellcheck disable=SC2086
  "$mlasim" $cmd >/dev/full 2>"$scratch/full.err"
  rc=$?
  [[ $rc -eq 3 ]] || { echo "FAIL $cmd >/dev/full: exit $rc, not 3"; fail=1; }
  grep -qF "mlasim: error: cannot write to stdout: No space left on device" "$scratch/full.err" ||
    { echo "FAIL $cmd >/dev/full: no message"; cat "$scratch/full.err"; fail=1; }
  # shellcheck disable=SC2086
  "$mlasim" $cmd >&- 2>"$scratch/closed.err"
  rc=$?
  [[ $rc -eq 3 ]] || { echo "FAIL $cmd >&-: exit $rc, not 3"; fail=1; }
  grep -qF "mlasim: error: cannot write to stdout: Bad file descriptor" "$scratch/closed.err" ||
    { echo "FAIL $cmd >&-: no message"; cat "$scratch/closed.err"; fail=1; }
done
"$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --dry-run --json "$scratch/b.json" >/dev/null
cmp -s "$scratch/a.json" "$scratch/b.json" || { echo "FAIL --json differs between two runs"; fail=1; }
[[ $(ls "$scratch" | grep -c tmp) -eq 0 ]] || { echo "FAIL --json left files: $(ls "$scratch")"; fail=1; }
grep -q '"total_num_scheduled_tokens": 1' "$scratch/a.json" || { echo "FAIL --json lacks the step fields"; fail=1; }

# check: a wrong expectation fails with exit 1, naming the line and expected vs actual.
sed 's/c: 224}, total_num_scheduled_tokens: 1024, new/c: 225}, total_num_scheduled_tokens: 1024, new/' \
  "$root/scenarios/scheduler/chunked_prefill_threshold_budget.yaml" >"$scratch/edited.yaml"
check "check fails on an edited expectation" 1 "$mlasim" check "$scratch/edited.yaml" --dry-run
contains "check fails on an edited expectation" "edited.yaml:12:7: expect step 0 num_scheduled_tokens: expected {a: 400, b: 400, c: 225}, got {a: 400, b: 400, c: 224}"
contains "check fails on an edited expectation" "0 passed, 1 failed"
check "check passes the original" 0 "$mlasim" check "$root/scenarios/scheduler/chunked_prefill_threshold_budget.yaml" --golden-dir "$root/golden" --dry-run
contains "check passes the original" "1 passed, 0 failed"
check "check on a malformed scenario" 2 "$mlasim" check "$root/tests/data/bad/unknown_profile.yaml"
check "check --junit into a missing directory fails before running" 2 "$mlasim" check "$root/scenarios/seed/lone_one_token_prompt.yaml" --junit "$scratch/no/such/dir/r.xml"
contains "check --junit into a missing directory fails before running" "--junit: the directory $scratch/no/such/dir does not exist"
check "run --json into a missing directory" 2 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --dry-run --json "$scratch/nope/x.json"
check "check on a missing path" 2 "$mlasim" check /nonexistent/dir
"$mlasim" check "$root/scenarios/scheduler" --dry-run --golden-dir "$root/golden" --junit "$scratch/report.xml" --json "$scratch/report.json" >/dev/null
grep -q '<testsuite name="mlasim check" tests="' "$scratch/report.xml" || { echo "FAIL --junit report"; fail=1; }
grep -q '"format": "mlasim-check"' "$scratch/report.json" || { echo "FAIL --json report"; fail=1; }

# A split golden edited by one token fails with the first differing step, expected vs actual.
mkdir -p "$scratch/golden/preemption_fcfs"
sed 's/^step 3 | decode 1\/17 prefill 0\/0 | b:mqa\[17,64\]/step 3 | decode 1\/18 prefill 0\/0 | b:mqa[18,64]/' \
  "$root/golden/preemption_fcfs/split.txt" >"$scratch/golden/preemption_fcfs/split.txt"
check "check fails on an edited golden" 1 "$mlasim" check "$root/scenarios/scheduler/preemption_fcfs.yaml" --golden-dir "$scratch/golden" --dry-run
contains "check fails on an edited golden" "$scratch/golden/preemption_fcfs/split.txt:9: split differs from the golden"
contains "check fails on an edited golden" "  expected: step 3 | decode 1/18 prefill 0/0 | b:mqa[18,64] | preempted - | finished -"
contains "check fails on an edited golden" "  actual:   step 3 | decode 1/17 prefill 0/0 | b:mqa[17,64] | preempted - | finished -"
contains "check fails on an edited golden" "0 passed, 1 failed"

# golden update: the whole folder appears at once, nothing left beside it, and check passes on it.
check "golden update" 0 "$mlasim" golden update "$root/scenarios/seed/lone_one_token_prompt.yaml" --golden-dir "$scratch/g2"
[[ $(ls "$scratch/g2/lone_one_token_prompt" | tr '\n' ' ') == "logits.npy logits_index.json meta.yaml split.txt " ]] ||
  { echo "FAIL golden update wrote: $(ls "$scratch/g2/lone_one_token_prompt")"; fail=1; }
[[ $(ls -A "$scratch/g2" | tr '\n' ' ') == "lone_one_token_prompt " ]] || { echo "FAIL golden update left: $(ls -A "$scratch/g2")"; fail=1; }
check "check against fresh goldens" 0 "$mlasim" check "$root/scenarios/seed/lone_one_token_prompt.yaml" --golden-dir "$scratch/g2"
check "golden update refuses a bad scenario" 2 "$mlasim" golden update "$root/tests/data/bad/unknown_profile.yaml" --golden-dir "$scratch/g3"
[[ ! -e "$scratch/g3" ]] || { echo "FAIL golden update wrote for a bad scenario"; fail=1; }
# A scenario name is a folder under the golden dir: an empty one must not replace the whole dir.
check "golden update refuses an empty name" 2 "$mlasim" golden update "$root/tests/data/bad/name_empty.yaml" --golden-dir "$scratch/g2"
contains "golden update refuses an empty name" "error: name: the scenario name is empty"
[[ $(ls -A "$scratch/g2" | tr '\n' ' ') == "lone_one_token_prompt " ]] || { echo "FAIL golden update with an empty name changed: $(ls -A "$scratch/g2")"; fail=1; }

# route: the lone one-token prompt and the spec's reorder example, exact.
check "route lone 1-token prompt" 0 "$mlasim" route --batch 1:0:1 --backend flashinfer-mla
contains "route lone 1-token prompt" "num_mqa=1 num_mha=0 total_toks=1"
check "route reorder example" 0 "$mlasim" route --batch 300:0:300,200:0:200,1:20:10 --backend flashattn-mla
contains "route reorder example" "order: 2,1,0  (reordered)"
check "route strict" 0 "$mlasim" route --batch 1:0:1 --backend flashinfer-mla --profile strict
contains "route strict" "num_mqa=0 num_mha=1 total_toks=1"
check "route bad batch" 2 "$mlasim" route --batch 1:0
check "route trailing comma" 2 "$mlasim" route --batch 1:0:1,2:0:2,
contains "route trailing comma" "--batch: entry 2 is empty (a doubled or trailing comma?)"
check "route doubled comma" 2 "$mlasim" route --batch 1:0:1,,2:0:2
contains "route doubled comma" "--batch: entry 1 is empty"
check "route token total past int" 2 "$mlasim" route --batch 2147483647:0:1,1:0:1
contains "route token total past int" "--batch: the rows up to entry 1 schedule 2147483648 tokens"
check "route --threshold 0" 2 "$mlasim" route --batch 1:0:1 --threshold 0
contains "route --threshold 0" "--threshold: Value 0 not in range 1 to 2147483647"
check "route --spec-tokens past int" 2 "$mlasim" route --batch 1:0:1 --spec-tokens 2147483647
check "route 1000 rows" 0 "$mlasim" route --batch "$(for i in $(seq 1000); do printf '1:%d:5,' $((i % 9)); done)1:0:1" --json
contains "route 1000 rows" '"num_mqa_tokens": 1001'
check "route json" 0 "$mlasim" route --batch 5:0:5 --backend triton-mla --json
contains "route json" '"num_mha_tokens": 5'

# --cpu-threads and MLASIM_CPU_THREADS: bad values exit 2; the run JSON and logits are the same
# for 1 and 3 threads.
check "version names the BLAS" 0 "$mlasim" version
contains "version names the BLAS" "cpu: OpenBLAS "
for bad in 0 -2 1025 two ""; do
  check "--cpu-threads '$bad'" 2 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --cpu-threads "$bad"
done
contains "--cpu-threads ''" "--cpu-threads: want auto or a number 1..1024"
# An unknown command is named; empty option values are refused; help to a full disk is exit 3 and
# names exit code 4.
check "unknown command" 2 "$mlasim" nosuch
contains "unknown command" "mlasim: error: unknown command 'nosuch'; the commands are run, check, route, deploy"
check "help" 0 "$mlasim" --help
contains "help" "4 the replay stopped where vLLM's own scheduler cannot go on"
if [[ -w /dev/full ]]; then
  check "help to /dev/full" 3 bash -c "\"\$0\" --help >/dev/full" "$mlasim"
  contains "help to /dev/full" "cannot write to stdout"
fi
check "run --json ''" 2 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --dry-run --json ""
contains "run --json ''" "--json: an empty value: give one, or leave the option out"
check "fuzz --shard ''" 2 "$mlasim" fuzz --runs 1 --shard ""
contains "fuzz --shard ''" "--shard: an empty value"
check "check --golden-dir ''" 2 "$mlasim" check "$root/scenarios/seed/lone_one_token_prompt.yaml" --golden-dir ""
contains "check --golden-dir ''" "--golden-dir: an empty value"
check "MLASIM_CPU_THREADS=x" 2 env MLASIM_CPU_THREADS=x "$mlasim" version
contains "MLASIM_CPU_THREADS=x" 'MLASIM_CPU_THREADS="x": want auto or a number 1..1024'
check "MLASIM_CPU_THREADS=3" 0 env MLASIM_CPU_THREADS=3 "$mlasim" version
contains "MLASIM_CPU_THREADS=3" ", 3 threads"
check "--cpu-threads in check" 0 "$mlasim" check "$root/scenarios/seed/lone_one_token_prompt.yaml" --golden-dir "$root/golden" --cpu-threads auto
for n in 1 3; do
  "$mlasim" run "$root/scenarios/scheduler/spec_decode_rollback.yaml" --cpu-threads $n --table none \
    --json "$scratch/t$n.json" --logits-dir "$scratch/l$n" >/dev/null
done
cmp -s "$scratch/t1.json" "$scratch/t3.json" || { echo "FAIL run JSON differs for 1 and 3 CPU threads"; fail=1; }
cmp -s "$scratch/l1/logits.npy" "$scratch/l3/logits.npy" || { echo "FAIL logits differ for 1 and 3 CPU threads"; fail=1; }

# --device cuda: 77 where no GPU is usable (CI), 0 where one is.
"$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --device cuda >/dev/null 2>&1
rc=$?
if [[ $rc -ne 77 && $rc -ne 0 ]]; then echo "FAIL --device cuda: exit $rc, expected 77 (no GPU) or 0"; fail=1; fi

# --set: a key it creates on the way (unknown or wrong-case section) is reported at the --set; an
# override of a value shared through a YAML alias changes that one place only.
check "--set unknown section" 2 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --set Engine.profile=strict
contains "--set unknown section" "<--set Engine.profile=strict>:1:1: error: Engine: unknown key"
contains "--set unknown section" 'did you mean `engine`?'
printf 'version: 1\nrequests:\n  - {id: a, prompt: &p [5, 6], max_tokens: 1}\n  - {id: b, prompt: *p, max_tokens: 1}\n' \
  >"$scratch/alias.yaml"
check "--set through an alias" 0 "$mlasim" run "$scratch/alias.yaml" --set 'requests.0.prompt=[7]' --dry-run
contains "--set through an alias" "a          arrival_step=0 prompt_len=1 max_tokens=1 min_tokens=0 prompt=[7]"
contains "--set through an alias" "b          arrival_step=0 prompt_len=2 max_tokens=1 min_tokens=0 prompt=[5, 6]"

# A path the file system refuses (a component over NAME_MAX) is an input error, never an abort.
long=$(printf 'x%.0s' $(seq 1 300))
check "check with a golden dir the file system refuses" 2 "$mlasim" check "$root/scenarios/seed/lone_one_token_prompt.yaml" \
  --golden-dir "/tmp/$long"
not_contains "check with a golden dir the file system refuses" "terminate called"

# Inputs without end or beyond the machine: a bounded read, a model refused before allocating.
check "run /dev/zero" 2 timeout 60 "$mlasim" run /dev/zero
contains "run /dev/zero" "/dev/zero: error: the scenario file is a device, not a regular file"
printf 'version: 1\nrequests_file: zero.jsonl\n' >"$scratch/zero.yaml"
ln -s /dev/zero "$scratch/zero.jsonl"
check "requests_file /dev/zero" 2 timeout 60 "$mlasim" run "$scratch/zero.yaml" --dry-run
# A device is refused before it is read: the requests file is read twice (counted, then streamed).
contains "requests_file /dev/zero" "zero.yaml:2:16: error: requests_file: the requests file $scratch/zero.jsonl is not a regular file"
printf 'version: 1\nmodel: {vocab_size: 2000000, hidden_size: 65536}\nrequests:\n  - {id: a, prompt_len: 4, max_tokens: 2}\n' \
  >"$scratch/huge.yaml"
for cmd in run check export; do
  args=("$scratch/huge.yaml")
  [[ $cmd == export ]] && args+=(-o "$scratch/huge_export")
  check "$cmd of a model larger than memory" 2 "$mlasim" $cmd "${args[@]}"
  contains "$cmd of a model larger than memory" "huge.yaml: error: model: the model needs 978.9 GiB on the CPU (weights 978.2 GiB, KV cache 720.1 MiB), more than the"
done
[[ -e $scratch/huge_export ]] && { echo "FAIL export of a refused model wrote its folder"; fail=1; }
check "dry run of a model larger than memory" 0 "$mlasim" run "$scratch/huge.yaml" --dry-run

# Legal input at the edges of the ranges runs (its cost per step and per expectation is in
# tools/bench/bench_cliffs; a test only checks the answers): a 2^20-block pool for 2,000 steps, and
# an expect block naming 2,000 requests.
check "a large KV pool" 0 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --dry-run --table summary \
  --set scheduler.num_gpu_blocks=1048576 --set requests.0.max_tokens=2000 --set expect.num_steps=2000
contains "a large KV pool" "2000 steps, 1 requests finished"
{ printf 'version: 1\nscheduler: {max_num_seqs: 256}\nrequests:\n'
  for i in $(seq 0 1999); do printf '  - {id: r%d, prompt: [5], max_tokens: 1}\n' "$i"; done
  printf 'expect:\n  requests:\n'
  for i in $(seq 0 1999); do printf '  - {id: r%d, status: finished_length_capped}\n' "$i"; done; } >"$scratch/many.yaml"
check "an expect block naming 2,000 requests" 0 "$mlasim" run "$scratch/many.yaml" --dry-run --table none
contains "an expect block naming 2,000 requests" "expect: all 2000 checks hold"

# Output paths: a symbolic link keeps pointing at its (replaced) target; a device, a stream or a
# directory cannot take a rename and is refused before the run.
mkdir -p "$scratch/links" "$scratch/targets"
ln -s ../targets/run.json "$scratch/links/run.json"
check "--json through a symlink" 0 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --dry-run --table none \
  --json "$scratch/links/run.json"
[[ -L $scratch/links/run.json ]] || { echo "FAIL the symlink was replaced"; fail=1; }
grep -qF '"format": "mlasim-run"' "$scratch/targets/run.json" || { echo "FAIL the link's target was not written"; fail=1; }
for target in /dev/stdout /dev/null "$scratch/targets"; do
  check "--json $target" 2 "$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --dry-run --json "$target"
  contains "--json $target" "error: --json: is "
  not_contains "--json $target" "step    0"
done
check "check --junit /dev/stdout" 2 "$mlasim" check "$root/scenarios/seed/lone_one_token_prompt.yaml" --dry-run --junit /dev/stdout
contains "check --junit /dev/stdout" "/dev/stdout: error: --junit: is a device or a stream (/dev/stdout), not a file"

[[ $fail -eq 0 ]] && echo "ok: CLI help, version and exit codes"
exit $fail
