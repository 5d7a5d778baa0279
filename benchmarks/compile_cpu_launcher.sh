#!/bin/bash
# Compiler launcher that appends "user sys wall output" (CPU seconds of the
# compile, children included) to $COMPILE_CPU_LOG (default compile_cpu.log in
# the build folder): the per-file build-time figures of benchmarks/RESULTS.md.
#   cmake -S . -B /tmp/b -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=$PWD/benchmarks/compile_cpu_launcher.sh ...
#   CCACHE_DISABLE=1 ninja -C /tmp/b -j2 && awk '{s += $1 + $2} END {print s}' /tmp/b/compile_cpu.log
# Put ccache after it (COMPILE_CPU_CCACHE=1) to time a cached build instead.
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
log=${COMPILE_CPU_LOG:-$PWD/compile_cpu.log}
if [ "${COMPILE_CPU_CCACHE:-0}" = 1 ]; then set -- ccache "$@"; fi
exec /usr/bin/time -a -o "$log" -f "%U %S %e $out" "$@"
