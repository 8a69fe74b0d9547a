# mlasim's third-party libraries: each found, or configuration stops naming it and the command that
# installs it on Debian/Ubuntu, Fedora, macOS (Homebrew) and conda-forge (a `pip install .` reads
# this message first when a library is missing).
function(mlasim_missing what debian fedora brew conda)
  message(FATAL_ERROR
    "mlasim needs ${what}, which was not found. Install it, then build again:\n"
    "  Debian, Ubuntu:  sudo apt-get install ${debian}\n"
    "  Fedora:          sudo dnf install ${fedora}\n"
    "  macOS:           brew install ${brew}\n"
    "  conda-forge:     conda install -c conda-forge ${conda}\n"
    "(or point CMAKE_PREFIX_PATH at an installation of it)")
endfunction()

# A macro, not a function: a package's config may set variables (Catch2's module path) for the
# project's scope.
macro(mlasim_require_package package what debian fedora brew conda)
  find_package(${package} ${ARGN} QUIET)
  if(NOT ${package}_FOUND)
    mlasim_missing("${what}" "${debian}" "${fedora}" "${brew}" "${conda}")
  endif()
endmacro()

mlasim_require_package(yaml-cpp "yaml-cpp (YAML scenarios)" libyaml-cpp-dev yaml-cpp-devel yaml-cpp yaml-cpp)
mlasim_require_package(fmt "fmt (formatting)" libfmt-dev fmt-devel fmt fmt)
mlasim_require_package(CLI11 "CLI11 (the command line)" libcli11-dev cli11-devel cli11 cli11)
if(MLASIM_BUILD_TESTS)
  mlasim_require_package(Catch2 "Catch2 2 (the tests; -DMLASIM_BUILD_TESTS=OFF builds without them)" catch2
                         catch2-devel catch2@2 "catch2<3" 2)
endif()
find_library(MLASIM_OPENBLAS_LIBRARY NAMES openblas)
find_path(MLASIM_OPENBLAS_INCLUDE_DIR NAMES cblas.h PATH_SUFFIXES openblas-pthread openblas)
if(NOT MLASIM_OPENBLAS_LIBRARY OR NOT MLASIM_OPENBLAS_INCLUDE_DIR)
  mlasim_missing("OpenBLAS (the CPU reference's matrix products)" libopenblas-dev openblas-devel openblas
                 "openblas libcblas")
endif()
