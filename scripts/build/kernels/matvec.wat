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
  ;; out[i] = exp((x[i] - shift) * scale) for i < n, f64; returns the sum, even and odd i summed
  ;; apart (one per lane) and then added. For shifted values <= 0 (softmax): each value is clamped
  ;; at -1000, k = nearest(t / ln 2), r = t - k ln 2 (Cody-Waite, two parts), exp(r) by its Taylor
  ;; polynomial of degree 12 in Estrin's scheme (short dependency chains), times 2^floor(k/2) and
  ;; 2^(k - floor(k/2)), built as bits, so that results below 2^-1022 round once. n is rounded up
  ;; to even: x[n] must be -inf when n is odd.
  (func (export "expsum") (param $x i32) (param $out i32) (param $n i32) (param $shift f64) (param $scale f64) (result f64)
    (local $i i32) (local $end i32) (local $t v128) (local $k v128) (local $r v128) (local $r2 v128) (local $r4 v128)
    (local $p v128) (local $q v128) (local $ki v128) (local $k1 v128) (local $sum v128) (local $vshift v128) (local $vscale v128)
    (local $t_a v128) (local $k_a v128) (local $r_a v128) (local $r2_a v128) (local $r4_a v128) (local $p_a v128) (local $q_a v128) (local $ki_a v128) (local $k1_a v128) (local $t_b v128) (local $k_b v128) (local $r_b v128) (local $r2_b v128) (local $r4_b v128) (local $p_b v128) (local $q_b v128) (local $ki_b v128) (local $k1_b v128) (local $pairs2 i32)
    (local.set $vshift (f64x2.splat (local.get $shift)))
    (local.set $vscale (f64x2.splat (local.get $scale)))
    (local.set $end (i32.shl (i32.and (i32.add (local.get $n) (i32.const 1)) (i32.const -2)) (i32.const 3)))
    ;; Two pairs a step, two independent chains the processor overlaps (~25% faster here); the
    ;; sum still adds pair after pair, in index order, then the loop below takes a last pair.
    (local.set $pairs2 (i32.and (local.get $end) (i32.const -32)))
    (block $done2
      (loop $next2
        (br_if $done2 (i32.ge_u (local.get $i) (local.get $pairs2)))
        (local.set $t_a (f64x2.mul (f64x2.sub (v128.load (i32.add (i32.add (local.get $x) (local.get $i)) (i32.const 0))) (local.get $vshift)) (local.get $vscale)))
        (local.set $t_a (f64x2.max (local.get $t_a) (v128.const f64x2 -1000 -1000)))
        (local.set $k_a (f64x2.nearest (f64x2.mul (local.get $t_a) (v128.const f64x2 1.4426950408889634 1.4426950408889634))))
        (local.set $r_a (f64x2.sub
          (f64x2.sub (local.get $t_a) (f64x2.mul (local.get $k_a) (v128.const f64x2 0.6931471803691238 0.6931471803691238)))
          (f64x2.mul (local.get $k_a) (v128.const f64x2 1.9082149292705877e-10 1.9082149292705877e-10))))
        (local.set $r2_a (f64x2.mul (local.get $r_a) (local.get $r_a)))
        (local.set $r4_a (f64x2.mul (local.get $r2_a) (local.get $r2_a)))
        ;; q = (c8 + c9 r) + r2 (c10 + c11 r) + r4 c12
        (local.set $q_a (f64x2.add
          (f64x2.add (f64x2.add (v128.const f64x2 2.48015873015873e-05 2.48015873015873e-05) (f64x2.mul (v128.const f64x2 2.7557319223985893e-06 2.7557319223985893e-06) (local.get $r_a)))
                     (f64x2.mul (local.get $r2_a) (f64x2.add (v128.const f64x2 2.755731922398589e-07 2.755731922398589e-07) (f64x2.mul (v128.const f64x2 2.505210838544172e-08 2.505210838544172e-08) (local.get $r_a)))))
          (f64x2.mul (local.get $r4_a) (v128.const f64x2 2.08767569878681e-09 2.08767569878681e-09))))
        ;; p = (1 + r) + r2 (c2 + c3 r) + r4 ((c4 + c5 r) + r2 (c6 + c7 r)) + r4 r4 q
        (local.set $p_a (f64x2.add
          (f64x2.add
            (f64x2.add (f64x2.add (v128.const f64x2 1 1) (local.get $r_a))
                       (f64x2.mul (local.get $r2_a) (f64x2.add (v128.const f64x2 0.5 0.5) (f64x2.mul (v128.const f64x2 0.16666666666666666 0.16666666666666666) (local.get $r_a)))))
            (f64x2.mul (local.get $r4_a) (f64x2.add (f64x2.add (v128.const f64x2 0.041666666666666664 0.041666666666666664) (f64x2.mul (v128.const f64x2 0.008333333333333333 0.008333333333333333) (local.get $r_a)))
                                                  (f64x2.mul (local.get $r2_a) (f64x2.add (v128.const f64x2 0.001388888888888889 0.001388888888888889) (f64x2.mul (v128.const f64x2 0.0001984126984126984 0.0001984126984126984) (local.get $r_a)))))))
          (f64x2.mul (f64x2.mul (local.get $r4_a) (local.get $r4_a)) (local.get $q_a))))
        (local.set $ki_a (i32x4.trunc_sat_f64x2_s_zero (local.get $k_a)))
        (local.set $k1_a (i32x4.shr_s (local.get $ki_a) (i32.const 1)))
        (local.set $p_a (f64x2.mul (local.get $p_a)
          (i64x2.shl (i64x2.add (i64x2.extend_low_i32x4_s (local.get $k1_a)) (v128.const i64x2 1023 1023)) (i32.const 52))))
        (local.set $p_a (f64x2.mul (local.get $p_a)
          (i64x2.shl (i64x2.add (i64x2.extend_low_i32x4_s (i32x4.sub (local.get $ki_a) (local.get $k1_a))) (v128.const i64x2 1023 1023)) (i32.const 52))))
        (v128.store (i32.add (i32.add (local.get $out) (local.get $i)) (i32.const 0)) (local.get $p_a))
        (local.set $t_b (f64x2.mul (f64x2.sub (v128.load (i32.add (i32.add (local.get $x) (local.get $i)) (i32.const 16))) (local.get $vshift)) (local.get $vscale)))
        (local.set $t_b (f64x2.max (local.get $t_b) (v128.const f64x2 -1000 -1000)))
        (local.set $k_b (f64x2.nearest (f64x2.mul (local.get $t_b) (v128.const f64x2 1.4426950408889634 1.4426950408889634))))
        (local.set $r_b (f64x2.sub
          (f64x2.sub (local.get $t_b) (f64x2.mul (local.get $k_b) (v128.const f64x2 0.6931471803691238 0.6931471803691238)))
          (f64x2.mul (local.get $k_b) (v128.const f64x2 1.9082149292705877e-10 1.9082149292705877e-10))))
        (local.set $r2_b (f64x2.mul (local.get $r_b) (local.get $r_b)))
        (local.set $r4_b (f64x2.mul (local.get $r2_b) (local.get $r2_b)))
        ;; q = (c8 + c9 r) + r2 (c10 + c11 r) + r4 c12
        (local.set $q_b (f64x2.add
          (f64x2.add (f64x2.add (v128.const f64x2 2.48015873015873e-05 2.48015873015873e-05) (f64x2.mul (v128.const f64x2 2.7557319223985893e-06 2.7557319223985893e-06) (local.get $r_b)))
                     (f64x2.mul (local.get $r2_b) (f64x2.add (v128.const f64x2 2.755731922398589e-07 2.755731922398589e-07) (f64x2.mul (v128.const f64x2 2.505210838544172e-08 2.505210838544172e-08) (local.get $r_b)))))
          (f64x2.mul (local.get $r4_b) (v128.const f64x2 2.08767569878681e-09 2.08767569878681e-09))))
        ;; p = (1 + r) + r2 (c2 + c3 r) + r4 ((c4 + c5 r) + r2 (c6 + c7 r)) + r4 r4 q
        (local.set $p_b (f64x2.add
          (f64x2.add
            (f64x2.add (f64x2.add (v128.const f64x2 1 1) (local.get $r_b))
                       (f64x2.mul (local.get $r2_b) (f64x2.add (v128.const f64x2 0.5 0.5) (f64x2.mul (v128.const f64x2 0.16666666666666666 0.16666666666666666) (local.get $r_b)))))
            (f64x2.mul (local.get $r4_b) (f64x2.add (f64x2.add (v128.const f64x2 0.041666666666666664 0.041666666666666664) (f64x2.mul (v128.const f64x2 0.008333333333333333 0.008333333333333333) (local.get $r_b)))
                                                  (f64x2.mul (local.get $r2_b) (f64x2.add (v128.const f64x2 0.001388888888888889 0.001388888888888889) (f64x2.mul (v128.const f64x2 0.0001984126984126984 0.0001984126984126984) (local.get $r_b)))))))
          (f64x2.mul (f64x2.mul (local.get $r4_b) (local.get $r4_b)) (local.get $q_b))))
        (local.set $ki_b (i32x4.trunc_sat_f64x2_s_zero (local.get $k_b)))
        (local.set $k1_b (i32x4.shr_s (local.get $ki_b) (i32.const 1)))
        (local.set $p_b (f64x2.mul (local.get $p_b)
          (i64x2.shl (i64x2.add (i64x2.extend_low_i32x4_s (local.get $k1_b)) (v128.const i64x2 1023 1023)) (i32.const 52))))
        (local.set $p_b (f64x2.mul (local.get $p_b)
          (i64x2.shl (i64x2.add (i64x2.extend_low_i32x4_s (i32x4.sub (local.get $ki_b) (local.get $k1_b))) (v128.const i64x2 1023 1023)) (i32.const 52))))
        (v128.store (i32.add (i32.add (local.get $out) (local.get $i)) (i32.const 16)) (local.get $p_b))
        (local.set $sum (f64x2.add (local.get $sum) (local.get $p_a)))
        (local.set $sum (f64x2.add (local.get $sum) (local.get $p_b)))
        (local.set $i (i32.add (local.get $i) (i32.const 32)))
        (br $next2)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $t (f64x2.mul (f64x2.sub (v128.load (i32.add (local.get $x) (local.get $i))) (local.get $vshift)) (local.get $vscale)))
        (local.set $t (f64x2.max (local.get $t) (v128.const f64x2 -1000 -1000)))
        (local.set $k (f64x2.nearest (f64x2.mul (local.get $t) (v128.const f64x2 1.4426950408889634 1.4426950408889634))))
        (local.set $r (f64x2.sub
          (f64x2.sub (local.get $t) (f64x2.mul (local.get $k) (v128.const f64x2 0.6931471803691238 0.6931471803691238)))
          (f64x2.mul (local.get $k) (v128.const f64x2 1.9082149292705877e-10 1.9082149292705877e-10))))
        (local.set $r2 (f64x2.mul (local.get $r) (local.get $r)))
        (local.set $r4 (f64x2.mul (local.get $r2) (local.get $r2)))
        ;; q = (c8 + c9 r) + r2 (c10 + c11 r) + r4 c12
        (local.set $q (f64x2.add
          (f64x2.add (f64x2.add (v128.const f64x2 2.48015873015873e-05 2.48015873015873e-05) (f64x2.mul (v128.const f64x2 2.7557319223985893e-06 2.7557319223985893e-06) (local.get $r)))
                     (f64x2.mul (local.get $r2) (f64x2.add (v128.const f64x2 2.755731922398589e-07 2.755731922398589e-07) (f64x2.mul (v128.const f64x2 2.505210838544172e-08 2.505210838544172e-08) (local.get $r)))))
          (f64x2.mul (local.get $r4) (v128.const f64x2 2.08767569878681e-09 2.08767569878681e-09))))
        ;; p = (1 + r) + r2 (c2 + c3 r) + r4 ((c4 + c5 r) + r2 (c6 + c7 r)) + r4 r4 q
        (local.set $p (f64x2.add
          (f64x2.add
            (f64x2.add (f64x2.add (v128.const f64x2 1 1) (local.get $r))
                       (f64x2.mul (local.get $r2) (f64x2.add (v128.const f64x2 0.5 0.5) (f64x2.mul (v128.const f64x2 0.16666666666666666 0.16666666666666666) (local.get $r)))))
            (f64x2.mul (local.get $r4) (f64x2.add (f64x2.add (v128.const f64x2 0.041666666666666664 0.041666666666666664) (f64x2.mul (v128.const f64x2 0.008333333333333333 0.008333333333333333) (local.get $r)))
                                                  (f64x2.mul (local.get $r2) (f64x2.add (v128.const f64x2 0.001388888888888889 0.001388888888888889) (f64x2.mul (v128.const f64x2 0.0001984126984126984 0.0001984126984126984) (local.get $r)))))))
          (f64x2.mul (f64x2.mul (local.get $r4) (local.get $r4)) (local.get $q))))
        (local.set $ki (i32x4.trunc_sat_f64x2_s_zero (local.get $k)))
        (local.set $k1 (i32x4.shr_s (local.get $ki) (i32.const 1)))
        (local.set $p (f64x2.mul (local.get $p)
          (i64x2.shl (i64x2.add (i64x2.extend_low_i32x4_s (local.get $k1)) (v128.const i64x2 1023 1023)) (i32.const 52))))
        (local.set $p (f64x2.mul (local.get $p)
          (i64x2.shl (i64x2.add (i64x2.extend_low_i32x4_s (i32x4.sub (local.get $ki) (local.get $k1))) (v128.const i64x2 1023 1023)) (i32.const 52))))
        (v128.store (i32.add (local.get $out) (local.get $i)) (local.get $p))
        (local.set $sum (f64x2.add (local.get $sum) (local.get $p)))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $next)))
    (f64.add (f64x2.extract_lane 0 (local.get $sum)) (f64x2.extract_lane 1 (local.get $sum))))


  ;; The gate's dense sum: z[f] = 0 + a0 x0[f] + a1 x1[f] + ... + a7 x7[f] for f < n (n rounded up
  ;; to even), with x_s the f32 row s of a signal-major matrix whose rows are `stride` floats, a the
  ;; 8 f64 signal weights and z f64: each product and sum in f64, in the JS loop's order.
  (func (export "combine8") (param $x i32) (param $stride i32) (param $a i32) (param $z i32) (param $n i32)
    (local $f i32) (local $end i32) (local $acc v128) (local $row i32) (local $bytes i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $a4 v128) (local $a5 v128) (local $a6 v128) (local $a7 v128)
    (local.set $a0 (v128.load64_splat (local.get $a)))
    (local.set $a1 (v128.load64_splat offset=8 (local.get $a)))
    (local.set $a2 (v128.load64_splat offset=16 (local.get $a)))
    (local.set $a3 (v128.load64_splat offset=24 (local.get $a)))
    (local.set $a4 (v128.load64_splat offset=32 (local.get $a)))
    (local.set $a5 (v128.load64_splat offset=40 (local.get $a)))
    (local.set $a6 (v128.load64_splat offset=48 (local.get $a)))
    (local.set $a7 (v128.load64_splat offset=56 (local.get $a)))
    (local.set $bytes (i32.shl (local.get $stride) (i32.const 2)))
    ;; f counts f32 bytes, two labels per step
    (local.set $end (i32.shl (i32.and (i32.add (local.get $n) (i32.const 1)) (i32.const -2)) (i32.const 2)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $f) (local.get $end)))
        (local.set $row (i32.add (local.get $x) (local.get $f)))
        (local.set $acc (f64x2.add (v128.const f64x2 0 0) (f64x2.mul (local.get $a0) (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $row))))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $acc (f64x2.add (local.get $acc) (f64x2.mul (local.get $a1) (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $row))))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $acc (f64x2.add (local.get $acc) (f64x2.mul (local.get $a2) (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $row))))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $acc (f64x2.add (local.get $acc) (f64x2.mul (local.get $a3) (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $row))))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $acc (f64x2.add (local.get $acc) (f64x2.mul (local.get $a4) (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $row))))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $acc (f64x2.add (local.get $acc) (f64x2.mul (local.get $a5) (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $row))))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $acc (f64x2.add (local.get $acc) (f64x2.mul (local.get $a6) (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $row))))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $acc (f64x2.add (local.get $acc) (f64x2.mul (local.get $a7) (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $row))))))
        (v128.store (i32.add (local.get $z) (i32.shl (local.get $f) (i32.const 1))) (local.get $acc))
        (local.set $f (i32.add (local.get $f) (i32.const 8)))
        (br $next))))
  ;; The largest of x[0 .. n) (f64; n rounded up to even: x[n] must be -inf when n is odd), keeping
  ;; the earlier value on ties and skipping NaN, as a JS loop of `if (v > max) max = v` does.
  (func (export "maxf64") (param $x i32) (param $n i32) (result f64)
    (local $i i32) (local $end i32) (local $acc v128) (local $l0 f64) (local $l1 f64)
    (local.set $acc (v128.const f64x2 -inf -inf))
    (local.set $end (i32.shl (i32.and (i32.add (local.get $n) (i32.const 1)) (i32.const -2)) (i32.const 3)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        ;; pmax(acc, v) = acc < v ? v : acc
        (local.set $acc (f64x2.pmax (local.get $acc) (v128.load (i32.add (local.get $x) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $next)))
    (local.set $l0 (f64x2.extract_lane 0 (local.get $acc)))
    (local.set $l1 (f64x2.extract_lane 1 (local.get $acc)))
    (select (local.get $l1) (local.get $l0) (f64.lt (local.get $l0) (local.get $l1))))
  ;; out[f] = f32(max(-12, x[f] - shift)) for f < n: log-probabilities clipped at -12, x f64, out f32
  ;; (exactly n values written: out is a row of a larger matrix).
  (func (export "logclip") (param $x i32) (param $n i32) (param $shift f64) (param $out i32)
    (local $f i32) (local $pairs i32) (local $vshift v128)
    (local.set $vshift (f64x2.splat (local.get $shift)))
    (local.set $pairs (i32.and (local.get $n) (i32.const -2)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $f) (local.get $pairs)))
        (v128.store64_lane 0 (i32.add (local.get $out) (i32.shl (local.get $f) (i32.const 2)))
          (f32x4.demote_f64x2_zero (f64x2.max (v128.const f64x2 -12 -12)
            (f64x2.sub (v128.load (i32.add (local.get $x) (i32.shl (local.get $f) (i32.const 3)))) (local.get $vshift)))))
        (local.set $f (i32.add (local.get $f) (i32.const 2)))
        (br $next)))
    (if (i32.lt_u (local.get $pairs) (local.get $n))
      (then
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $pairs) (i32.const 2)))
          (f32.demote_f64 (f64.max (f64.const -12)
            (f64.sub (f64.load (i32.add (local.get $x) (i32.shl (local.get $pairs) (i32.const 3)))) (local.get $shift))))))))
  ;; DTDR-G's history-aware embedding row: out[f] = f32((x[f] - g0 r0[f] - g1 r1[f] - ...) * scale)
  ;; for f < n (exactly n written: out is a row of a larger matrix), x and the m rows r_j f32 (rows
  ;; `stride` bytes apart), the gammas g_j and every product and difference f64, in the JS order.
  (func (export "residual") (param $x i32) (param $out i32) (param $rows i32) (param $stride i32) (param $m i32) (param $g i32) (param $n i32) (param $scale f64)
    (local $f i32) (local $pairs i32) (local $j i32) (local $row i32) (local $gp i32) (local $acc v128) (local $vscale v128) (local $a f64)
    (local.set $vscale (f64x2.splat (local.get $scale)))
    (local.set $pairs (i32.and (local.get $n) (i32.const -2)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $f) (local.get $pairs)))
        (local.set $acc (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $x) (i32.shl (local.get $f) (i32.const 2))))))
        (local.set $row (i32.add (local.get $rows) (i32.shl (local.get $f) (i32.const 2))))
        (local.set $gp (local.get $g))
        (local.set $j (i32.const 0))
        (block $rows_done
          (loop $next_row
            (br_if $rows_done (i32.ge_u (local.get $j) (local.get $m)))
            (local.set $acc (f64x2.sub (local.get $acc)
              (f64x2.mul (v128.load64_splat (local.get $gp)) (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $row))))))
            (local.set $row (i32.add (local.get $row) (local.get $stride)))
            (local.set $gp (i32.add (local.get $gp) (i32.const 8)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $next_row)))
        (v128.store64_lane 0 (i32.add (local.get $out) (i32.shl (local.get $f) (i32.const 2)))
          (f32x4.demote_f64x2_zero (f64x2.mul (local.get $acc) (local.get $vscale))))
        (local.set $f (i32.add (local.get $f) (i32.const 2)))
        (br $next)))
    (if (i32.lt_u (local.get $pairs) (local.get $n))
      (then
        (local.set $a (f64.promote_f32 (f32.load (i32.add (local.get $x) (i32.shl (local.get $pairs) (i32.const 2))))))
        (local.set $row (i32.add (local.get $rows) (i32.shl (local.get $pairs) (i32.const 2))))
        (local.set $gp (local.get $g))
        (local.set $j (i32.const 0))
        (block $tail_done
          (loop $tail_row
            (br_if $tail_done (i32.ge_u (local.get $j) (local.get $m)))
            (local.set $a (f64.sub (local.get $a) (f64.mul (f64.load (local.get $gp)) (f64.promote_f32 (f32.load (local.get $row))))))
            (local.set $row (i32.add (local.get $row) (local.get $stride)))
            (local.set $gp (i32.add (local.get $gp) (i32.const 8)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $tail_row)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $pairs) (i32.const 2)))
          (f32.demote_f64 (f64.mul (local.get $a) (local.get $scale)))))))
  ;; x[i] = x[i] / by for i < n (f64; n rounded up to even, the pad included); returns the first
  ;; index i < n of the largest quotient, NaN skipped: the scan `if (x[i] > best)` from best = -inf,
  ;; in index order, fused into the division so that no second pass reads the quotients.
  (func (export "divide") (param $x i32) (param $n i32) (param $by f64) (result i32)
    (local $i i32) (local $f i32) (local $end i32) (local $v v128) (local $q v128) (local $e f64) (local $best f64) (local $arg i32)
    (local.set $v (f64x2.splat (local.get $by)))
    (local.set $best (f64.const -inf))
    (local.set $end (i32.shl (i32.and (i32.add (local.get $n) (i32.const 1)) (i32.const -2)) (i32.const 3)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $q (f64x2.div (v128.load (i32.add (local.get $x) (local.get $i))) (local.get $v)))
        (v128.store (i32.add (local.get $x) (local.get $i)) (local.get $q))
        (local.set $e (f64x2.extract_lane 0 (local.get $q)))
        (if (f64.gt (local.get $e) (local.get $best))
          (then (local.set $best (local.get $e)) (local.set $arg (local.get $f))))
        (local.set $e (f64x2.extract_lane 1 (local.get $q)))
        ;; the pad of an odd n is not a label
        (if (i32.and (f64.gt (local.get $e) (local.get $best)) (i32.lt_u (i32.add (local.get $f) (i32.const 1)) (local.get $n)))
          (then (local.set $best (local.get $e)) (local.set $arg (i32.add (local.get $f) (i32.const 1)))))
        (local.set $f (i32.add (local.get $f) (i32.const 2)))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $next)))
    (local.get $arg))
  ;; Sampled softmax, forward: z[k] = ((k < positives ? 0 : correction) + (s0 + s1)) + (s2 + s3)
  ;; for k < m, with s_r = sum over d = r (mod 4) of w[cand[k]*dim + d] * x[d] (f64), the
  ;; remainder d >= 4*floor(dim/4) added to s0 last: the JS twin's four running sums, s0 and s1 in
  ;; one f64x2, s2 and s3 in another, each product and sum in the same order.
  (func (export "sampleddots") (param $w i32) (param $x i32) (param $dim i32) (param $cand i32) (param $m i32) (param $z i32) (param $positives i32) (param $correction f64)
    (local $k i32) (local $j i32) (local $row i32) (local $bytes i32) (local $main i32) (local $a v128) (local $b v128) (local $s0 f64)
    (local.set $bytes (i32.shl (local.get $dim) (i32.const 3)))
    (local.set $main (i32.shl (i32.and (local.get $dim) (i32.const -4)) (i32.const 3)))
    (block $done_k
      (loop $next_k
        (br_if $done_k (i32.ge_u (local.get $k) (local.get $m)))
        (local.set $row (i32.add (local.get $w) (i32.mul (i32.load (i32.add (local.get $cand) (i32.shl (local.get $k) (i32.const 2)))) (local.get $bytes))))
        (local.set $a (v128.const f64x2 0 0))
        (local.set $b (v128.const f64x2 0 0))
        (local.set $j (i32.const 0))
        (block $done_j
          (loop $next_j
            (br_if $done_j (i32.ge_u (local.get $j) (local.get $main)))
            (local.set $a (f64x2.add (local.get $a) (f64x2.mul (v128.load (i32.add (local.get $row) (local.get $j))) (v128.load (i32.add (local.get $x) (local.get $j))))))
            (local.set $b (f64x2.add (local.get $b) (f64x2.mul (v128.load offset=16 (i32.add (local.get $row) (local.get $j))) (v128.load offset=16 (i32.add (local.get $x) (local.get $j))))))
            (local.set $j (i32.add (local.get $j) (i32.const 32)))
            (br $next_j)))
        (local.set $s0 (f64x2.extract_lane 0 (local.get $a)))
        (block $done_t
          (loop $next_t
            (br_if $done_t (i32.ge_u (local.get $j) (local.get $bytes)))
            (local.set $s0 (f64.add (local.get $s0) (f64.mul (f64.load (i32.add (local.get $row) (local.get $j))) (f64.load (i32.add (local.get $x) (local.get $j))))))
            (local.set $j (i32.add (local.get $j) (i32.const 8)))
            (br $next_t)))
        (f64.store (i32.add (local.get $z) (i32.shl (local.get $k) (i32.const 3)))
          (f64.add
            (f64.add (select (f64.const 0) (local.get $correction) (i32.lt_u (local.get $k) (local.get $positives)))
                     (f64.add (local.get $s0) (f64x2.extract_lane 1 (local.get $a))))
            (f64.add (f64x2.extract_lane 0 (local.get $b)) (f64x2.extract_lane 1 (local.get $b)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next_k))))
  ;; Sampled softmax, backward: g[cand[k]*dim + d] += z[k] * x[d] for k < m where z[k] != 0, f64
  ;; (one product and one sum per element, as the JS twin).
  (func (export "sampledaxpy") (param $g i32) (param $x i32) (param $dim i32) (param $cand i32) (param $m i32) (param $z i32)
    (local $k i32) (local $j i32) (local $row i32) (local $bytes i32) (local $pairs i32) (local $zk f64) (local $v v128)
    (local.set $bytes (i32.shl (local.get $dim) (i32.const 3)))
    (local.set $pairs (i32.shl (i32.and (local.get $dim) (i32.const -2)) (i32.const 3)))
    (block $done_k
      (loop $next_k
        (br_if $done_k (i32.ge_u (local.get $k) (local.get $m)))
        (local.set $zk (f64.load (i32.add (local.get $z) (i32.shl (local.get $k) (i32.const 3)))))
        (if (f64.ne (local.get $zk) (f64.const 0))
          (then
            (local.set $row (i32.add (local.get $g) (i32.mul (i32.load (i32.add (local.get $cand) (i32.shl (local.get $k) (i32.const 2)))) (local.get $bytes))))
            (local.set $v (f64x2.splat (local.get $zk)))
            (local.set $j (i32.const 0))
            (block $done_j
              (loop $next_j
                (br_if $done_j (i32.ge_u (local.get $j) (local.get $pairs)))
                (v128.store (i32.add (local.get $row) (local.get $j))
                  (f64x2.add (v128.load (i32.add (local.get $row) (local.get $j))) (f64x2.mul (local.get $v) (v128.load (i32.add (local.get $x) (local.get $j))))))
                (local.set $j (i32.add (local.get $j) (i32.const 16)))
                (br $next_j)))
            (if (i32.lt_u (local.get $j) (local.get $bytes))
              (then
                (f64.store (i32.add (local.get $row) (local.get $j))
                  (f64.add (f64.load (i32.add (local.get $row) (local.get $j))) (f64.mul (local.get $zk) (f64.load (i32.add (local.get $x) (local.get $j))))))))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next_k))))
  ;; The upper triangle of a symmetric rank-1 update: a[i*n + j] += x[i] * x[j] for j >= i where
  ;; x[i] != 0, f64 (one product and one sum per element, as the JS twin): XᵀX one row at a time.
  (func (export "syrupper") (param $a i32) (param $x i32) (param $n i32)
    (local $i i32) (local $j i32) (local $row i32) (local $end i32) (local $xi f64) (local $v v128)
    (block $done_i
      (loop $next_i
        (br_if $done_i (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $xi (f64.load (i32.add (local.get $x) (i32.shl (local.get $i) (i32.const 3)))))
        (if (f64.ne (local.get $xi) (f64.const 0))
          (then
            (local.set $row (i32.add (local.get $a) (i32.shl (i32.mul (local.get $i) (local.get $n)) (i32.const 3))))
            (local.set $v (f64x2.splat (local.get $xi)))
            (local.set $j (i32.shl (local.get $i) (i32.const 3)))
            (local.set $end (i32.shl (local.get $n) (i32.const 3)))
            (block $done_j
              (loop $next_j
                (br_if $done_j (i32.gt_u (i32.add (local.get $j) (i32.const 16)) (local.get $end)))
                (v128.store (i32.add (local.get $row) (local.get $j))
                  (f64x2.add (v128.load (i32.add (local.get $row) (local.get $j))) (f64x2.mul (local.get $v) (v128.load (i32.add (local.get $x) (local.get $j))))))
                (local.set $j (i32.add (local.get $j) (i32.const 16)))
                (br $next_j)))
            (if (i32.lt_u (local.get $j) (local.get $end))
              (then
                (f64.store (i32.add (local.get $row) (local.get $j))
                  (f64.add (f64.load (i32.add (local.get $row) (local.get $j))) (f64.mul (local.get $xi) (f64.load (i32.add (local.get $x) (local.get $j))))))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next_i))))
  ;; One row of a Gram matrix of f32 vectors in f64 sums: out[f] = f32(((s0 + s1) + s2) + s3) for
  ;; f < n, with s_r the sum over j = r (mod 4), j < 4*floor(d/4), of v[c*d + j] * v[f*d + j] (f32
  ;; values, exact f64 products) and the remainder j added to s0 last: kmeans.ts dotAt's order.
  (func (export "gramrow") (param $v i32) (param $c i32) (param $n i32) (param $d i32) (param $out i32)
    (local $f i32) (local $j i32) (local $crow i32) (local $row i32) (local $bytes i32) (local $main i32) (local $a v128) (local $b v128) (local $s0 f64)
    (local.set $bytes (i32.shl (local.get $d) (i32.const 2)))
    (local.set $main (i32.shl (i32.and (local.get $d) (i32.const -4)) (i32.const 2)))
    (local.set $crow (i32.add (local.get $v) (i32.mul (local.get $c) (local.get $bytes))))
    (local.set $row (local.get $v))
    (block $done_f
      (loop $next_f
        (br_if $done_f (i32.ge_u (local.get $f) (local.get $n)))
        (local.set $a (v128.const f64x2 0 0))
        (local.set $b (v128.const f64x2 0 0))
        (local.set $j (i32.const 0))
        (block $done_j
          (loop $next_j
            (br_if $done_j (i32.ge_u (local.get $j) (local.get $main)))
            (local.set $a (f64x2.add (local.get $a) (f64x2.mul
              (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $crow) (local.get $j))))
              (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $row) (local.get $j)))))))
            (local.set $b (f64x2.add (local.get $b) (f64x2.mul
              (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (i32.add (local.get $crow) (local.get $j))))
              (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (i32.add (local.get $row) (local.get $j)))))))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $next_j)))
        (local.set $s0 (f64x2.extract_lane 0 (local.get $a)))
        (block $done_t
          (loop $next_t
            (br_if $done_t (i32.ge_u (local.get $j) (local.get $bytes)))
            (local.set $s0 (f64.add (local.get $s0) (f64.mul
              (f64.promote_f32 (f32.load (i32.add (local.get $crow) (local.get $j))))
              (f64.promote_f32 (f32.load (i32.add (local.get $row) (local.get $j)))))))
            (local.set $j (i32.add (local.get $j) (i32.const 4)))
            (br $next_t)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $f) (i32.const 2)))
          (f32.demote_f64 (f64.add (f64.add (f64.add (local.get $s0) (f64x2.extract_lane 1 (local.get $a))) (f64x2.extract_lane 0 (local.get $b))) (f64x2.extract_lane 1 (local.get $b)))))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (local.set $f (i32.add (local.get $f) (i32.const 1)))
        (br $next_f))))
  ;; dst[j] += src[j] for j < n, f64 (one sum per element, as the JS twin): a one-hot row added
  ;; to the logits, or the logits' gradient added to a one-hot row's (the full-softmax heads).
  (func (export "addvec") (param $dst i32) (param $src i32) (param $n i32)
    (local $j i32) (local $bytes i32) (local $pairs i32)
    (local.set $bytes (i32.shl (local.get $n) (i32.const 3)))
    (local.set $pairs (i32.shl (i32.and (local.get $n) (i32.const -2)) (i32.const 3)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $j) (local.get $pairs)))
        (v128.store (i32.add (local.get $dst) (local.get $j))
          (f64x2.add (v128.load (i32.add (local.get $dst) (local.get $j))) (v128.load (i32.add (local.get $src) (local.get $j)))))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $next)))
    (if (i32.lt_u (local.get $j) (local.get $bytes))
      (then
        (f64.store (i32.add (local.get $dst) (local.get $j))
          (f64.add (f64.load (i32.add (local.get $dst) (local.get $j))) (f64.load (i32.add (local.get $src) (local.get $j))))))))
  ;; Adam over n f64 weights w with moments m, v and gradient sums g, each operation as the JS twin:
  ;; d = g*scale + l2*w; m = b1*m + c1*d; v = b2*v + (c2*d)*d; w = w - (lr*m)/(sqrt(v) + eps).
  (func (export "adam") (param $w i32) (param $m i32) (param $v i32) (param $g i32) (param $n i32)
    (param $scale f64) (param $l2 f64) (param $lr f64) (param $b1 f64) (param $c1 f64) (param $b2 f64) (param $c2 f64) (param $eps f64)
    (local $j i32) (local $bytes i32) (local $pairs i32) (local $d v128) (local $mv v128) (local $vv v128)
    (local $d1 f64) (local $m1 f64) (local $v1 f64)
    (local.set $bytes (i32.shl (local.get $n) (i32.const 3)))
    (local.set $pairs (i32.shl (i32.and (local.get $n) (i32.const -2)) (i32.const 3)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $j) (local.get $pairs)))
        (local.set $d (f64x2.add
          (f64x2.mul (v128.load (i32.add (local.get $g) (local.get $j))) (f64x2.splat (local.get $scale)))
          (f64x2.mul (f64x2.splat (local.get $l2)) (v128.load (i32.add (local.get $w) (local.get $j))))))
        (local.set $mv (f64x2.add
          (f64x2.mul (f64x2.splat (local.get $b1)) (v128.load (i32.add (local.get $m) (local.get $j))))
          (f64x2.mul (f64x2.splat (local.get $c1)) (local.get $d))))
        (local.set $vv (f64x2.add
          (f64x2.mul (f64x2.splat (local.get $b2)) (v128.load (i32.add (local.get $v) (local.get $j))))
          (f64x2.mul (f64x2.mul (f64x2.splat (local.get $c2)) (local.get $d)) (local.get $d))))
        (v128.store (i32.add (local.get $m) (local.get $j)) (local.get $mv))
        (v128.store (i32.add (local.get $v) (local.get $j)) (local.get $vv))
        (v128.store (i32.add (local.get $w) (local.get $j))
          (f64x2.sub (v128.load (i32.add (local.get $w) (local.get $j)))
            (f64x2.div (f64x2.mul (f64x2.splat (local.get $lr)) (local.get $mv)) (f64x2.add (f64x2.sqrt (local.get $vv)) (f64x2.splat (local.get $eps))))))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $next)))
    (if (i32.lt_u (local.get $j) (local.get $bytes))
      (then
        (local.set $d1 (f64.add
          (f64.mul (f64.load (i32.add (local.get $g) (local.get $j))) (local.get $scale))
          (f64.mul (local.get $l2) (f64.load (i32.add (local.get $w) (local.get $j))))))
        (local.set $m1 (f64.add (f64.mul (local.get $b1) (f64.load (i32.add (local.get $m) (local.get $j)))) (f64.mul (local.get $c1) (local.get $d1))))
        (local.set $v1 (f64.add (f64.mul (local.get $b2) (f64.load (i32.add (local.get $v) (local.get $j)))) (f64.mul (f64.mul (local.get $c2) (local.get $d1)) (local.get $d1))))
        (f64.store (i32.add (local.get $m) (local.get $j)) (local.get $m1))
        (f64.store (i32.add (local.get $v) (local.get $j)) (local.get $v1))
        (f64.store (i32.add (local.get $w) (local.get $j))
          (f64.sub (f64.load (i32.add (local.get $w) (local.get $j)))
            (f64.div (f64.mul (local.get $lr) (local.get $m1)) (f64.add (f64.sqrt (local.get $v1)) (local.get $eps))))))))
)
