# Sourced by tools/run and tools/test: puts the CUDA toolkit on PATH when it is installed.
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
