#!/usr/bin/env bash
# A library missing at configure time (as `pip install .` meets it) stops CMake with its name and
# the command that installs it on Debian/Ubuntu, Fedora, Homebrew and conda-forge.
set -u
root=$1
source "$(dirname "$0")/check_lib.sh"
make_scratch
for row in "yaml-cpp|libyaml-cpp-dev|yaml-cpp-devel|brew install yaml-cpp" "fmt|libfmt-dev|fmt-devel|brew install fmt" \
           "CLI11|libcli11-dev|cli11-devel|brew install cli11" "Catch2|catch2|catch2-devel|brew install catch2@2"; do
  IFS='|' read -r pkg debian fedora brew <<<"$row"
  check "without $pkg" 1 cmake -S "$root" -B "$scratch/$pkg" -G Ninja -DMLASIM_ENABLE_CUDA=OFF -DMLASIM_CUDA_EMULATOR=OFF \
    "-DCMAKE_DISABLE_FIND_PACKAGE_$pkg=ON"
  contains "without $pkg" "mlasim needs $pkg"
  contains "without $pkg" "sudo apt-get install $debian"
  contains "without $pkg" "sudo dnf install $fedora"
  contains "without $pkg" "$brew"
  contains "without $pkg" "conda install -c conda-forge"
done
exit $fail
