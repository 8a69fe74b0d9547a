# The one description of a CUDA target. Each folder that owns CUDA code calls
#
#   mlasim_cuda_target(<name> LIBRARY|EXECUTABLE SOURCES <files...>
#                      [LINK <cpu targets...>] [CUDA_LINK <mlasim CUDA targets...>]
#                      [TOOLKIT <CUDA:: libraries...>] [WARNINGS])
#
# and gets <name> built by nvcc (when MLASIM_HAVE_CUDA) and its emulated twin <name>_emu (when
# MLASIM_CUDA_EMULATOR): the same sources compiled as C++ against emu/'s runtime, run on the CPU.
#   LINK       CPU libraries both link (PUBLIC for a library)
#   CUDA_LINK  mlasim CUDA targets: <name> links them, the twin links their twins (<dep>_emu)
#   TOOLKIT    CUDA toolkit libraries: the nvcc target only
#   WARNINGS   compile the C++ sources with mlasim_warnings
# A library's users include it from the project root. Returns nothing; callers add what is theirs
# alone (definitions, tests) to <name> / <name>_emu with if(TARGET ...).

# A .cu file cannot be a C++ source of one target and a CUDA source of another: the twin reaches
# each one through a generated one-line .cpp that includes it.
function(mlasim_emu_wrap out_var)
  set(wrapped)
  foreach(src ${ARGN})
    get_filename_component(src ${src} ABSOLUTE)
    if(src MATCHES "\\.cu$")
      get_filename_component(name ${src} NAME_WE)
      set(out ${CMAKE_CURRENT_BINARY_DIR}/emu_wrap/${name}.cpp)
      file(CONFIGURE OUTPUT ${out} CONTENT "#include \"${src}\"\n")
      list(APPEND wrapped ${out})
    else()
      list(APPEND wrapped ${src})
    endif()
  endforeach()
  set(${out_var} ${wrapped} PARENT_SCOPE)
endfunction()

function(mlasim_cuda_target name kind)
  cmake_parse_arguments(PARSE_ARGV 2 arg "WARNINGS" "" "SOURCES;LINK;CUDA_LINK;TOOLKIT")
  if(kind STREQUAL "LIBRARY")
    set(scope PUBLIC)
  elseif(kind STREQUAL "EXECUTABLE")
    set(scope PRIVATE)
  else()
    message(FATAL_ERROR "mlasim_cuda_target(${name}): kind must be LIBRARY or EXECUTABLE, not ${kind}")
  endif()

  if(MLASIM_HAVE_CUDA)
    if(kind STREQUAL "LIBRARY")
      add_library(${name} STATIC ${arg_SOURCES})
      target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
    else()
      add_executable(${name} ${arg_SOURCES})
    endif()
    target_link_libraries(${name} ${scope} ${arg_LINK} ${arg_CUDA_LINK} PRIVATE ${arg_TOOLKIT})
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings --expt-relaxed-constexpr>)
    if(arg_WARNINGS)
      target_link_libraries(${name} PRIVATE mlasim_warnings)
    endif()
  endif()

  if(MLASIM_CUDA_EMULATOR)
    mlasim_emu_wrap(sources ${arg_SOURCES})
    if(kind STREQUAL "LIBRARY")
      add_library(${name}_emu STATIC ${sources})
      target_include_directories(${name}_emu PUBLIC ${PROJECT_SOURCE_DIR})
    else()
      add_executable(${name}_emu ${sources})
    endif()
    set(twins)
    foreach(dep ${arg_CUDA_LINK})
      list(APPEND twins ${dep}_emu)
    endforeach()
    target_link_libraries(${name}_emu ${scope} mlasim_simt_emu ${arg_LINK} ${twins})
    # (-Wsubobject-linkage: the .cu files are reached through an #include, so GCC takes them for headers.)
    target_compile_options(${name}_emu PRIVATE -Wno-unknown-pragmas -Wno-subobject-linkage)
    if(arg_WARNINGS)
      target_link_libraries(${name}_emu PRIVATE mlasim_warnings)
    endif()
  endif()
endfunction()
