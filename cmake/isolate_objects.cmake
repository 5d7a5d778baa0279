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
# core calls) stay global. Two kinds of symbol need more care:
#  - vtables and type_info objects (_ZTV, _ZTI, _ZTS, _ZTT, _ZTC) stay global
#    and weak: the bindings need one type_info per class (pybind11 looks types
#    up by it) and may build an object whose class the hot file defines
#    inline. An object then calls one side's copy of an inline virtual
#    function; each copy is consistent in itself and the objects' layout is
#    the same at every level, so either is correct;
#  - GNU unique objects (static locals of inline functions, such as Eigen's
#    cache sizes) cannot be made local by objcopy: they are renamed with the
#    level as suffix, so each side keeps its own;
#  - the project's own weak definitions (namespace directable) stay global:
#    explicit instantiations (`template class SPHFluid<2>;`) are weak in
#    GCC's output, yet they are the entry points of a templated hot file.
#    Made local, the extension would take them from the baseline's member of
#    the static library (the level's copy never running), and a unity batch's
#    member would bring its other files' baseline definitions along
#    (duplicate symbols). Global, the level's copy is the one linked (the
#    merged object comes before the library): baseline code of the same
#    extension may then call the level's copy of a project inline function,
#    which is correct (a level's extension is loaded only on a CPU of that
#    level, and the objects' layout is the same at every level).
#
# Run as: cmake -DLD=... -DNM=... -DOBJCOPY=... -DOUTPUT=merged.o -DTAG=level
#               -DOBJECTS="a.o|b.o|..." [-DONLY="cpp/src/x.cpp|..."] -P isolate_objects.cmake
# ONLY keeps the objects of those sources, or of those unity batches
# ("Unity/unity_<group>_cxx.cxx"): a level that borrows the level below's
# copies of the files it does not compile itself.
foreach(var LD NM OBJCOPY OUTPUT OBJECTS TAG)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "isolate_objects.cmake: ${var} is not set")
  endif()
endforeach()

# The objects come joined by "|" (a CMake list would split the -D argument);
# $<TARGET_OBJECTS> also names the precompiled header (.gch): objects only.
string(REPLACE "|" ";" OBJECTS "${OBJECTS}")
list(FILTER OBJECTS INCLUDE REGEX "\\.(o|obj)$")
if(DEFINED ONLY AND NOT ONLY STREQUAL "")
  string(REPLACE "|" ";" ONLY "${ONLY}")
  set(kept "")
  foreach(object IN LISTS OBJECTS)
    foreach(source IN LISTS ONLY)
      string(LENGTH "${object}" n_object)
      string(LENGTH "/${source}.o" n_suffix)
      if(n_object GREATER_EQUAL n_suffix)
        math(EXPR start "${n_object} - ${n_suffix}")
        string(SUBSTRING "${object}" ${start} -1 tail)
        if(tail STREQUAL "/${source}.o")
          list(APPEND kept "${object}")
        endif()
      endif()
    endforeach()
  endforeach()
  list(LENGTH ONLY n_wanted)
  list(LENGTH kept n_kept)
  if(NOT n_kept EQUAL n_wanted)
    message(FATAL_ERROR "isolate_objects.cmake: ${n_wanted} sources asked for, ${n_kept} objects found")
  endif()
  set(OBJECTS ${kept})
endif()
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
set(renames "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ ]+) ([A-Za-z]) ")
    set(name "${CMAKE_MATCH_1}")
    set(kind "${CMAKE_MATCH_2}")
    if(kind MATCHES "^[TDBR]$" OR (kind MATCHES "^[VW]$" AND name MATCHES "^(_ZT[VISTC]|_ZNK?10directable)"))
      string(APPEND keep "${name}\n")
    elseif(kind STREQUAL "u")
      string(APPEND renames "${name} ${name}.${TAG}\n")
    endif()
  endif()
endforeach()
file(WRITE "${OUTPUT}.keep" "${keep}")
file(WRITE "${OUTPUT}.rename" "${renames}")

execute_process(COMMAND "${OBJCOPY}" "--redefine-syms=${OUTPUT}.rename" "--keep-global-symbols=${OUTPUT}.keep"
                        "${raw}" "${OUTPUT}"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "objcopy failed: ${err}")
endif()
file(REMOVE "${raw}")
