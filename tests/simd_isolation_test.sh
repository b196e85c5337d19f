#!/usr/bin/env bash
# Usage: simd_isolation_test.sh <binary>
# The binary is built for baseline x86-64 and holds the traversal kernels once per instruction
# set (src/bvh/internal/wide_kernels.h, src/mesh/internal/mesh_kernels.h). Only the functions of
# the wide_avx2, wide_avx512, mesh_avx2 and mesh_avx512 namespaces may hold VEX or EVEX
# instructions (AVX and later): any other function that does
# would run them on every CPU, the SSE path included (the inline-function trap that
# docs/ARCHITECTURE.md, "Instruction sets", describes). Disassembles the binary's own code and
# lists the offenders. Skipped (exit 0 with a message) off x86-64 or without objdump.
set -euo pipefail
binary=$1
if ! command -v objdump >/dev/null 2>&1; then
  echo "simd isolation: objdump not found; skipped"
  exit 0
fi
if ! objdump -f "$binary" | grep -q 'x86-64'; then
  echo "simd isolation: $binary is not x86-64; skipped"
  exit 0
fi
# VEX/EVEX mnemonics start with v (vmovaps, vaddps ...); the AVX-512 mask instructions with k.
offenders=$(objdump -d --no-show-raw-insn -C "$binary" | awk '
  /^[0-9a-f]+ <.*>:$/ { name = $0; next }
  /\t(v[a-z0-9]+|k(mov|and|or|xor|not|test|shift|unpck|add)[a-z0-9]*)[ \t]/ { hits[name]++ }
  END { for (n in hits) print n }' | grep -vE 'collide::(wide|mesh)_avx(2|512)::' || true)
kernels=$(objdump -d --no-show-raw-insn -C "$binary" | grep -cE '^[0-9a-f]+ <.*collide::(wide|mesh)_avx(2|512)::' || true)
if [ "$kernels" -eq 0 ]; then
  echo "simd isolation: no AVX2 / AVX-512 kernel found in $binary"
  exit 1
fi
if [ -n "$offenders" ]; then
  echo "simd isolation: functions outside the AVX kernels hold AVX instructions:"
  echo "$offenders" | head -20
  exit 1
fi
echo "simd isolation: $kernels AVX kernels, no AVX instruction elsewhere in $binary"
