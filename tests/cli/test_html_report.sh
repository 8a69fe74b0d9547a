#!/usr/bin/env bash
# `mlasim check --html` on a suite with one planted failure (its split golden and logits golden
# edited), opened in headless Chromium: the DOM has every scenario, one failure open with its first
# differing step, its logits comparison and its timeline, the passing ones folded. Skipped (77)
# only when Chromium is not installed and cannot be.
set -u
mlasim=$1
root=$2
source "$(dirname "$0")/check_lib.sh"
chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $chromium ]]; then
  echo "SKIP: no chromium (tools/bootstrap --tests installs Debian's chromium; it could not be installed here)"
  exit 77
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -r "$root/golden" "$scratch/golden"
g="$scratch/golden/lone_one_token_prompt"
sed -i 's/^step 1 | decode 1\/1 prefill 0\/0 | hello:mqa\[1,1\]/step 1 | decode 0\/0 prefill 1\/1 | hello:mha[1,1]/' "$g/split.txt"
# The logits golden becomes a faulty backend's logits (a consistent logits.npy + index pair).
"$mlasim" run "$root/scenarios/seed/lone_one_token_prompt.yaml" --inject kv_norm_dropped --table none \
  --golden-dir "$scratch/none" --logits-dir "$scratch/faulty" >/dev/null
cp "$scratch/faulty/logits.npy" "$scratch/faulty/logits_index.json" "$g/"
num=$(ls "$root"/scenarios/seed/*.yaml | wc -l)

check "check --html" 1 "$mlasim" check "$root/scenarios/seed" -j 2 --golden-dir "$scratch/golden" --html "$scratch/report.html"
contains "check --html" "$((num - 1)) passed, 1 failed"
dom=$("$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$scratch/profile" \
  --dump-dom "file://$scratch/report.html" 2>/dev/null)
[[ -n $dom ]] || { echo "FAIL chromium rendered nothing"; exit 1; }
out=$dom
contains "summary" "<p id=\"summary\" class=\"summary bad\">$((num - 1)) passed, 1 failed</p>"
[[ $(grep -o '<tr class="scenario-row ' <<<"$dom" | wc -l) == "$num" ]] || { echo "FAIL the table has $(grep -o '<tr class="scenario-row ' <<<"$dom" | wc -l) rows, expected $num"; fail=1; }
[[ $(grep -o '<section class="scenario ' <<<"$dom" | wc -l) == "$num" ]] || { echo "FAIL sections"; fail=1; }
[[ $(grep -o '<details open=""' <<<"$dom" | wc -l) == 1 ]] || { echo "FAIL expected exactly one open section"; fail=1; }
section=$(tr -d '\n' <<<"$dom" | grep -o '<section class="scenario fail"[^§]*</section>' | sed 's#</section>.*#</section>#')
out=$section
contains "failure" "<summary>FAIL lone_one_token_prompt (2 of 12 checks failed)</summary>"
contains "failure" "First differing step: <code>$g/split.txt</code> line 7"
contains "failure" '<tr class="differs"><th>split</th><td class="differs">decode 0/0 prefill 1/1</td><td class="differs">decode 1/1 prefill 0/0</td></tr>'
contains "failure" '<tr class="same"><th>step</th><td class="">step 1</td><td class="">step 1</td></tr>'
contains "failure" "Logits against the golden (fp32 class): DIFFER"
contains "failure" "<th>max abs</th><td class=\"\">7.712e-01 (tol 1e-04)</td><td>step 2 hello position 2 token 252</td>"
contains "failure" "<th>top-1 mismatches</th><td class=\"fail\">1 of 3 rows</td><td>first at step 1 hello position 1</td>"
contains "failure" '<svg xmlns="http://www.w3.org/2000/svg" class="mlasim-timeline"'
contains "failure" '<rect class="cell fresh-on-decode"'
out=$dom
not_contains "passing ones carry no timeline" '<section class="scenario pass" id="scenario-0"><details open'
[[ $(grep -o 'class="mlasim-timeline"' <<<"$dom" | wc -l) == 1 ]] || { echo "FAIL only the failure has a timeline"; fail=1; }
grep -qE '<script|<link|<img|<iframe|src=|@import|url\(' "$scratch/report.html" && { echo "FAIL the report loads something from outside"; fail=1; }

check "screenshot" 0 "$root/tools/screenshot" "$scratch/report.html" "$scratch/report.png" 1280x1600
[[ $(head -c 8 "$scratch/report.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || { echo "FAIL report.png is not a PNG"; fail=1; }
check "bad --html path" 2 "$mlasim" check "$root/scenarios/seed/lone_one_token_prompt.yaml" --html "$scratch/no/such/r.html"
[[ $fail -eq 0 ]] && echo "ok: HTML report rendered by $($chromium --version 2>/dev/null | head -1)"
exit $fail
