#!/usr/bin/env bash
# The CUDA backend is a module mlasim loads only for --device cuda: no CUDA library at start-up,
# and exit 77 with a clear message when the module or the GPU is missing.
set -u
mlasim=$1
root=$2
have_cuda=$3  # 1 when this build has the CUDA backend module
scenario=$root/scenarios/seed/lone_one_token_prompt.yaml
cuda_libs='libmlasim_cuda_backend|libcublas|libcudart|libnccl|libcuda\.so'
source "$(dirname "$0")/check_lib.sh"
loads_cuda() {  # loads_cuda COMMAND... : true when the dynamic loader opens a CUDA library for it
  LD_DEBUG=libs "$@" 2>&1 >/dev/null | grep -qE "$cuda_libs"
}

if ldd "$mlasim" | grep -E "$cuda_libs"; then echo "FAIL mlasim links a CUDA library (ldd above)"; fail=1; fi
for args in "version" "route --batch 1:0:1" "run $scenario --dry-run"; do
  # shellcheck disable=SC2086
  if loads_cuda "$mlasim" $args; then echo "FAIL mlasim $args loads a CUDA library"; fail=1; fi
done

if [[ $have_cuda == 1 ]]; then
  check "version finds the module" 0 "$mlasim" version
  contains "version finds the module" "libmlasim_cuda_backend.so (loaded by --device cuda"
  # The check above would see cuBLAS: version --cuda loads it.
  if ! loads_cuda "$mlasim" version --cuda; then echo "FAIL version --cuda does not load cuBLAS"; fail=1; fi
  check "version --cuda" 0 "$mlasim" version --cuda
  contains "version --cuda" "cuda backend: "
  contains "version --cuda" "cuBLAS"
  devices=$(sed -n 's/^cuda devices: \([0-9]*\).*/\1/p' <<<"$out")
  if [[ $devices == 0 ]]; then
    check "run --device cuda without a GPU" 77 "$mlasim" run "$scenario" --device cuda
    contains "run --device cuda without a GPU" "mlasim: --device cuda requested but no usable CUDA device: "
    check "check --device cuda without a GPU" 77 "$mlasim" check "$scenario" --device cuda
    contains "check --device cuda without a GPU" "no usable CUDA device"
  fi

  # mlasim without its module beside it: exit 77, naming the missing file.
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  cp "$mlasim" "$scratch/mlasim"
  check "run --device cuda without the module" 77 "$scratch/mlasim" run "$scenario" --device cuda
  contains "run --device cuda without the module" \
    "mlasim: --device cuda requested but the CUDA backend cannot be loaded: $scratch/libmlasim_cuda_backend.so is missing"
  check "version without the module" 0 "$scratch/mlasim" version
  contains "version without the module" "cuda: no"
  # A module that does not load (here: not an ELF file) is no usable GPU either.
  echo "not a shared object" >"$scratch/libmlasim_cuda_backend.so"
  check "check --device cuda with a broken module" 77 "$scratch/mlasim" check "$scenario" --device cuda
  contains "check --device cuda with a broken module" "the CUDA backend cannot be loaded: $scratch/libmlasim_cuda_backend.so: "
else
  check "run --device cuda without CUDA" 77 "$mlasim" run "$scenario" --device cuda
  contains "run --device cuda without CUDA" "mlasim: --device cuda requested but this mlasim was built without CUDA"
fi

[[ $fail -eq 0 ]] && echo "ok: no CUDA library at start-up; --device cuda loads the module or exits 77"
exit $fail
