;; The int8 scan of the in-memory vector index (vector-index.ts): one query against every stored code, 16 lanes at a
;; time with WASM SIMD. scan(query, codes, rows, dim, out): out[r] = Σ_j query[j] · codes[r·dim + j], dim a multiple of
;; 16, i8 in, i32 out (|products| ≤ 16,384, so the i16 pair sums and i32 totals never overflow for dim ≤ 131,072).
;; Assembled by scripts/wasm.mjs into vector-scan-wasm.ts (committed, so building Engram needs no WebAssembly tools).
(module
  (memory (export "memory") 1)
  (func (export "scan") (param $q i32) (param $codes i32) (param $rows i32) (param $dim i32) (param $out i32)
    (local $r i32) (local $j i32) (local $row i32) (local $acc v128) (local $a v128) (local $b v128)
    (block $done
      (loop $rowsLoop
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (local.set $row (i32.add (local.get $codes) (i32.mul (local.get $r) (local.get $dim))))
        (block $rowDone
          (loop $lanes
            (br_if $rowDone (i32.ge_u (local.get $j) (local.get $dim)))
            (local.set $a (v128.load (i32.add (local.get $q) (local.get $j))))
            (local.set $b (v128.load (i32.add (local.get $row) (local.get $j))))
            (local.set $acc (i32x4.add (local.get $acc)
              (i32x4.extadd_pairwise_i16x8_s (i16x8.extmul_low_i8x16_s (local.get $a) (local.get $b)))))
            (local.set $acc (i32x4.add (local.get $acc)
              (i32x4.extadd_pairwise_i16x8_s (i16x8.extmul_high_i8x16_s (local.get $a) (local.get $b)))))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $lanes)))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rowsLoop)))))
