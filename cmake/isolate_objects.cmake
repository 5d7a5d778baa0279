# Merges one ISA level's hot objects into a single relocatable object whose
# only global symbols are the functions the hot sources define outright.
#
# The hot files are compiled again per level, and they instantiate the same
# inline and template code (Eigen's kernels, std:: containers) as the
# baseline files linked beside them. Those instantiations are weak (COMDAT):
# left global, the linker would keep one copy for both, so baseline code could
# run an AVX-512 instantiation or a hot kernel a baseline one. Here every weak
# or unique symbol of the merged object becomes local, so each side calls its
# own copies; only the strong definitions (the entry points the rest of the
# core calls) stay global. GNU unique objects (the static locals of inline
# functions, such as Eigen's cache sizes) are data, not code: objcopy leaves
# them global and both sides share one copy, which is safe because every file
# sees the same layout (one Eigen alignment for all levels, CMakeLists.txt).
#
# Run as: cmake -DLD=... -DNM=... -DOBJCOPY=... -DOUTPUT=merged.o
#               -DOBJECTS="a.o;b.o;..." -P isolate_objects.cmake
foreach(var LD NM OBJCOPY OUTPUT OBJECTS)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "isolate_objects.cmake: ${var} is not set")
  endif()
endforeach()

set(raw "${OUTPUT}.raw.o")
# --force-group-allocation: the COMDAT groups become ordinary sections, so the
# final link cannot discard the baseline's copy of a group in favour of ours
# (or the reverse) by matching the group's name.
execute_process(COMMAND "${LD}" -r --force-group-allocation -o "${raw}" ${OBJECTS}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ld -r failed: ${err}")
endif()

execute_process(COMMAND "${NM}" --defined-only --extern-only --format=posix "${raw}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed: ${err}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(keep "")
set(n_local 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ ]+) ([A-Za-z]) ")
    set(name "${CMAKE_MATCH_1}")
    set(kind "${CMAKE_MATCH_2}")
    # strong code, data, read-only data, bss: kept; W/V (weak) become local
    if(kind MATCHES "^[TDBR]$")
      string(APPEND keep "${name}\n")
    else()
      math(EXPR n_local "${n_local} + 1")
    endif()
  endif()
endforeach()
file(WRITE "${OUTPUT}.keep" "${keep}")

execute_process(COMMAND "${OBJCOPY}" "--keep-global-symbols=${OUTPUT}.keep" "${raw}" "${OUTPUT}"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "objcopy failed: ${err}")
endif()
file(REMOVE "${raw}")
