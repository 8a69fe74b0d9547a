# A ctest guard: the test cases a Catch2 binary lists are exactly the ones registered with ctest
# by name, so no case is left out of ctest and no registered name runs nothing.
#   cmake -DEXE=<binary> -DREGISTERED=<name;name;...> [-DIGNORE_REGEX=<regex>] -P catch_list_matches.cmake
# IGNORE_REGEX: lines the binary prints besides the names (the GPU binary's device line).
execute_process(COMMAND ${EXE} --list-test-names-only OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(rc LESS 0)
  message(FATAL_ERROR "${EXE} --list-test-names-only failed: ${rc}")
endif()
string(REGEX REPLACE "\n$" "" out "${out}")
string(REPLACE ";" "<semicolon>" out "${out}")  # a ';' in a name stays in its list element
string(REPLACE "\n" ";" listed "${out}")
list(FILTER listed EXCLUDE REGEX "^$")
if(DEFINED IGNORE_REGEX)
  list(FILTER listed EXCLUDE REGEX "${IGNORE_REGEX}")
endif()
set(registered ${REGISTERED})
list(SORT listed)
list(SORT registered)
set(missing ${listed})
list(REMOVE_ITEM missing ${registered})
set(extra ${registered})
list(REMOVE_ITEM extra ${listed})
list(LENGTH listed n_listed)
list(LENGTH registered n_registered)
if(missing OR extra)
  message(FATAL_ERROR "Catch2 lists ${n_listed} test cases, ctest registers ${n_registered}\n"
                      "  listed but never run by ctest: ${missing}\n"
                      "  registered but listed by no test case: ${extra}")
endif()
message(STATUS "${n_listed} test cases listed, ${n_registered} registered: the same names")
