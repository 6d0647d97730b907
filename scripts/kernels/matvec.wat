(module
  (import "env" "memory" (memory 1))
  ;; out[k] = sum_j rows[k*d + j] * q[j], f32, d a multiple of 4
  (func (export "matvec") (param $rows i32) (param $q i32) (param $n i32) (param $d i32) (param $out i32)
    (local $k i32) (local $j i32) (local $acc v128) (local $row i32) (local $bytes i32)
    (local.set $bytes (i32.shl (local.get $d) (i32.const 2)))
    (local.set $row (local.get $rows))
    (block $done_k
      (loop $next_k
        (br_if $done_k (i32.ge_u (local.get $k) (local.get $n)))
        (local.set $acc (v128.const f32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (block $done_j
          (loop $next_j
            (br_if $done_j (i32.ge_u (local.get $j) (local.get $bytes)))
            (local.set $acc (f32x4.add (local.get $acc)
              (f32x4.mul (v128.load (i32.add (local.get $row) (local.get $j)))
                         (v128.load (i32.add (local.get $q) (local.get $j))))))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $next_j)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 2)))
          (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
                   (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next_k))))
  ;; g[r*cols + c] += x[r] * p[c], f32, cols a multiple of 4 (a rank-1 update: gradient accumulation)
  (func (export "outer") (param $g i32) (param $x i32) (param $p i32) (param $rows i32) (param $cols i32)
    (local $r i32) (local $c i32) (local $xr v128) (local $row i32) (local $bytes i32)
    (local.set $bytes (i32.shl (local.get $cols) (i32.const 2)))
    (local.set $row (local.get $g))
    (block $done_r
      (loop $next_r
        (br_if $done_r (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $xr (f32x4.splat (f32.load (i32.add (local.get $x) (i32.shl (local.get $r) (i32.const 2))))))
        (local.set $c (i32.const 0))
        (block $done_c
          (loop $next_c
            (br_if $done_c (i32.ge_u (local.get $c) (local.get $bytes)))
            (v128.store (i32.add (local.get $row) (local.get $c))
              (f32x4.add (v128.load (i32.add (local.get $row) (local.get $c)))
                         (f32x4.mul (local.get $xr) (v128.load (i32.add (local.get $p) (local.get $c))))))
            (local.set $c (i32.add (local.get $c) (i32.const 16)))
            (br $next_c)))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $next_r))))
)
