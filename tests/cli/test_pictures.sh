#!/usr/bin/env bash
# `mlasim run --svg` and `--trace-out` as a user meets them: the SVG parses as XML (xmllint) with one
# cell per request and step, the misrouted cell marked with its class and title; the 100-step run;
# two profiles one above the other; the trace's events; bad combinations and paths refused.
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
command -v xmllint >/dev/null || { echo "FAIL xmllint is missing: run tools/bootstrap --tests (libxml2-utils)"; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
seed="$root/scenarios/seed/lone_one_token_prompt.yaml"
xpath() { xmllint --xpath "$2" "$1" 2>/dev/null; }
cells='//*[local-name()="rect"][starts-with(@class,"cell ")]'

check "svg of the seed scenario" 0 "$mlasim" run "$seed" --dry-run --svg "$scratch/seed.svg"
contains "svg of the seed scenario" "expect: all 10 checks hold"
xmllint --noout "$scratch/seed.svg" || { echo "FAIL seed.svg is not well-formed XML"; fail=1; }
[[ $(xpath "$scratch/seed.svg" "count($cells)") == 3 ]] || { echo "FAIL seed.svg: $(xpath "$scratch/seed.svg" "count($cells)") cells, expected 3"; fail=1; }
misrouted=$(xpath "$scratch/seed.svg" 'string(//*[local-name()="rect"][@class="cell fresh-on-decode"]/*[local-name()="title"])')
[[ $misrouted == "step 0 · hello · q=1 nct=0 P=1 · path mqa · decode path (absorbed MQA form): FRESH PREFILL ON THE DECODE PATH · region 3 prefill (nct=0); split: every row is a decode: max query length 1 <= threshold 1 -> mqa" ]] \
  || { echo "FAIL seed.svg misrouted cell title: $misrouted"; fail=1; }
[[ $(xpath "$scratch/seed.svg" 'count(//*[local-name()="rect"][@class="cell decode"])') == 2 ]] || { echo "FAIL seed.svg decode cells"; fail=1; }
# The picture in the README is this command's output.
cmp -s "$scratch/seed.svg" "$root/docs/img/lone_one_token_prompt.svg" \
  || { echo "FAIL docs/img/lone_one_token_prompt.svg is stale: regenerate it with the command in README.md"; fail=1; }

check "svg of 100 steps" 0 "$mlasim" run "$seed" --dry-run --table none --set requests.0.max_tokens=100 \
  --set expect.num_steps=100 --svg "$scratch/long.svg"
xmllint --noout "$scratch/long.svg" || { echo "FAIL long.svg is not well-formed XML"; fail=1; }
[[ $(xpath "$scratch/long.svg" "count($cells)") == 100 ]] || { echo "FAIL long.svg: $(xpath "$scratch/long.svg" "count($cells)") cells, expected 100"; fail=1; }
[[ $(xpath "$scratch/long.svg" 'count(//*[local-name()="rect"][@class="cell fresh-on-decode"])') == 1 ]] || { echo "FAIL long.svg: one misrouted cell"; fail=1; }
[[ $(xpath "$scratch/long.svg" 'string((//*[local-name()="rect"][@class="cell decode"])[99]/*[local-name()="title"])') == "step 99 · hello · q=1 nct=99 P=1 · path mqa · decode path (absorbed MQA form) · region 0 decode (nct=99 >= P=1, q=1 <= T=1); split: every row is a decode: max query length 1 <= threshold 1 -> mqa" ]] \
  || { echo "FAIL long.svg: title of step 99"; fail=1; }

check "svg of two profiles" 0 "$mlasim" run "$seed" --compare-profile strict --svg "$scratch/two.svg"
xmllint --noout "$scratch/two.svg" || { echo "FAIL two.svg is not well-formed XML"; fail=1; }
[[ $(xpath "$scratch/two.svg" 'count(//*[local-name()="g"][@class="timeline"])') == 2 ]] || { echo "FAIL two.svg: two timelines"; fail=1; }
[[ $(xpath "$scratch/two.svg" 'count(//*[local-name()="rect"][@class="cell prefill"])') == 1 ]] || { echo "FAIL two.svg: strict routes step 0 to the prefill path"; fail=1; }
for flag in --json --jsonl --trace-out; do
  check "--compare-profile with $flag" 2 "$mlasim" run "$seed" --compare-profile strict "$flag" "$scratch/x"
  contains "--compare-profile with $flag" "write no --json, --jsonl, --logits-dir or --trace-out"
done
check "--compare-profile with --logits-dir" 2 "$mlasim" run "$seed" --compare-profile strict --logits-dir "$scratch/l"
check "--compare-profile with --resolved" 2 "$mlasim" run "$seed" --compare-profile strict --resolved "$scratch/x"
contains "--compare-profile with --resolved" "--resolved writes the trace of"
[[ -e $scratch/x || -e $scratch/l ]] && { echo "FAIL a refused --compare-profile wrote a file"; fail=1; }

# --resolved: a header, then one line per request as admitted (the seed's one request at step 0).
check "resolved" 0 "$mlasim" run "$seed" --dry-run --table none --resolved "$scratch/r.jsonl"
[[ $(wc -l <"$scratch/r.jsonl") == 2 ]] || { echo "FAIL resolved: header + 1 request"; fail=1; }
head -1 "$scratch/r.jsonl" | grep -qF '"format": "mlasim-resolved-trace"' || { echo "FAIL resolved header"; fail=1; }
sed -n 2p "$scratch/r.jsonl" | grep -qF '"admitted_step": 0, "prompt": [' || { echo "FAIL resolved request line"; fail=1; }
check "trace" 0 "$mlasim" run "$root/scenarios/scheduler/preemption_fcfs.yaml" --dry-run --table none --trace-out "$scratch/t.json" --trace-clock step
head -1 "$scratch/t.json" | grep -qF '"traceEvents": [' || { echo "FAIL trace header"; fail=1; }
[[ $(grep -c '"ph": "X"' "$scratch/t.json") == 7 ]] || { echo "FAIL trace: 7 slices"; fail=1; }
[[ $(grep -c '"ph": "C"' "$scratch/t.json") == 15 ]] || { echo "FAIL trace: 15 counters"; fail=1; }
grep -qF '{"ph": "i", "name": "preempted", "ts": 2000.000, "pid": 1, "tid": 2, "s": "t", "args": {"step": 2}}' "$scratch/t.json" \
  || { echo "FAIL trace: b preempted at step 2"; fail=1; }
check "bad --trace-clock" 2 "$mlasim" run "$seed" --dry-run --trace-out "$scratch/u.json" --trace-clock wall
check "--svg into a missing directory" 2 "$mlasim" run "$seed" --dry-run --svg "$scratch/no/such/dir.svg"
[[ -e $scratch/u.json ]] && { echo "FAIL a refused run wrote its trace"; fail=1; }
ls "$scratch" | grep -q '\.tmp\.' && { echo "FAIL a temporary file was left"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok: svg (seed, 100 steps, two profiles) and trace"
exit $fail
