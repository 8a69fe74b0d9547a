#!/usr/bin/env bash
# Every injected fault makes `mlasim check` fail on exactly the seed scenarios whose math it
# changes, naming the logits as the cause; scenarios it cannot touch still pass.
#   decode_skips_cache_write_for_fresh_rows: scenarios with a fresh row on the decode path
#   chunk_lse_merge_wrong: scenarios with chunked context on the prefill path
#   topk_off_by_one: scenarios of a sparse (DSA) model (preset tiny-dsa)
#   fp8_dequant_scale_wrong: none of the seed's; the two fp8 scenarios of scenarios/model/
#   the others (scale, RoPE, kv norm, W_UK layout): every scenario (every one has decode or RoPE math)
set -u
mlasim=$1
root=$2
fail=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$root"
for scenario in scenarios/seed/*.yaml; do
  name=$(basename "$scenario" .yaml)
  "$mlasim" run "$scenario" --dry-run --json "$scratch/$name.json" >/dev/null || { echo "FAIL dry run of $name"; fail=1; }
done
for fault in decode_skips_cache_write_for_fresh_rows decode_scale_1_over_sqrt_576 rope_neox_instead_of_interleaved \
             kv_norm_dropped w_uk_transposed chunk_lse_merge_wrong topk_off_by_one; do
  "$mlasim" check scenarios/seed --inject "$fault" >"$scratch/out.txt" 2>&1
  rc=$?
  for scenario in scenarios/seed/*.yaml; do
    name=$(basename "$scenario" .yaml)
    case $fault in
      decode_skips_cache_write_for_fresh_rows) grep -q '"fresh_on_decode_path": true' "$scratch/$name.json" && affected=1 || affected=0 ;;
      chunk_lse_merge_wrong) grep -qE '"num_chunks": [1-9]' "$scratch/$name.json" && affected=1 || affected=0 ;;
      topk_off_by_one) grep -q 'preset: tiny-dsa' "$scenario" && affected=1 || affected=0 ;;
      *) affected=1 ;;
    esac
    if [[ $affected -eq 1 ]]; then
      grep -q "^FAIL $name " "$scratch/out.txt" || { echo "FAIL $fault: $name should fail"; fail=1; }
      # The cause named is the logits (the split does not depend on the backend).
      awk -v n="$name" '$0 ~ "^(PASS|FAIL|ERROR) " {cur=$2} cur==n' "$scratch/out.txt" | grep -q "logits DIFFER" ||
        { echo "FAIL $fault: $name does not name the logits"; fail=1; }
      if awk -v n="$name" '$0 ~ "^(PASS|FAIL|ERROR) " {cur=$2} cur==n' "$scratch/out.txt" | grep -q "split differs"; then
        echo "FAIL $fault: $name blames the split"; fail=1
      fi
    else
      grep -q "^PASS $name " "$scratch/out.txt" || { echo "FAIL $fault: $name should pass (the fault cannot touch it)"; fail=1; }
    fi
  done
  [[ $rc -eq 1 ]] || { echo "FAIL $fault: check exited $rc, expected 1"; fail=1; }
done
# fp8_dequant_scale_wrong touches fp8 KV caches only: no seed scenario has one; both fp8 scenarios fail.
"$mlasim" check scenarios/seed --inject fp8_dequant_scale_wrong >"$scratch/out.txt" 2>&1 ||
  { echo "FAIL fp8_dequant_scale_wrong: a seed scenario failed (none has an fp8 cache)"; fail=1; }
"$mlasim" check scenarios/model/fp8_cache_flashmla.yaml scenarios/model/fp8_ds_mla_sparse.yaml \
  --inject fp8_dequant_scale_wrong >"$scratch/out.txt" 2>&1
rc=$?
[[ $rc -eq 1 && $(grep -c '^FAIL fp8_' "$scratch/out.txt") -eq 2 && $(grep -c 'logits DIFFER' "$scratch/out.txt") -eq 2 ]] ||
  { echo "FAIL fp8_dequant_scale_wrong: expected both fp8 scenarios to fail on their logits (exit $rc)"; cat "$scratch/out.txt"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok: every fault fails exactly the seed scenarios it affects, naming the logits"
exit $fail
