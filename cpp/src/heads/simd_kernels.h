// Inner loops of the head statistics: a 4x16 register-blocked matrix micro-kernel and a
// vectorised exp. Written with GCC/Clang vector extensions so the compiler emits AVX2/FMA
// (or SSE pairs) from one source; the caller is compiled in several target clones.
#pragma once

#include <cstdint>
#include <cstring>

// Every helper taking or returning a vector is force-inlined into one translation unit, so
// the ABI of passing 32-byte vectors without AVX (-Wpsabi) never matters.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace attnprof::heads_simd {

typedef float v8sf __attribute__((vector_size(32)));
typedef int v8si __attribute__((vector_size(32)));

#define ATTNPROF_INLINE inline __attribute__((always_inline))

ATTNPROF_INLINE v8sf load8(const float* p) {
  v8sf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
ATTNPROF_INLINE void store8(float* p, v8sf v) { std::memcpy(p, &v, sizeof v); }
// `zero + x` (scalar operand broadcast) compiles to one vbroadcastss; an initializer list
// of eight copies compiles to a chain of inserts.
ATTNPROF_INLINE v8sf splat(float x) { return v8sf{} + x; }
// Broadcast of a float in memory: integer `zero + bits` folds away, leaving one broadcast load
// (the float form keeps an add to respect -0.0).
ATTNPROF_INLINE v8sf splat_load(const float* p) {
  int bits;
  std::memcpy(&bits, p, sizeof bits);
  const v8si b = v8si{} + bits;
  v8sf v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// exp(x) for x <= 0 (softmax numerators), relative error ~2 ulp: x = n*ln2 + r with
// |r| <= ln2/2, a degree-6 Taylor-like polynomial for e^r, 2^n built in the exponent bits.
// Inputs below -87 give 0 (the true value is below FLT_MIN), -inf gives 0.
ATTNPROF_INLINE v8sf exp8(v8sf x) {
  const v8sf lo = splat(-87.0f);
  const v8si underflow = x < lo;
  x = x < lo ? lo : x;
  // n = floor(x * log2(e) + 0.5); convertvector truncates toward zero, so step down
  // where truncation rounded up (negative non-integers).
  const v8sf t = x * splat(1.44269504088896341f) + splat(0.5f);
  v8sf nf = __builtin_convertvector(__builtin_convertvector(t, v8si), v8sf);
  nf = nf > t ? nf - splat(1.0f) : nf;
  const v8sf r = x - nf * splat(0.693359375f) + nf * splat(2.12194440e-4f);
  const v8sf r2 = r * r;
  v8sf p = splat(1.9875691500e-4f);
  p = p * r + splat(1.3981999507e-3f);
  p = p * r + splat(8.3334519073e-3f);
  p = p * r + splat(4.1665795894e-2f);
  p = p * r + splat(1.6666665459e-1f);
  p = p * r + splat(5.0000001201e-1f);
  p = p * r2 + r + splat(1.0f);
  const v8si bits = (__builtin_convertvector(nf, v8si) + 127) << 23;
  v8sf pow2n;
  std::memcpy(&pow2n, &bits, sizeof pow2n);
  v8sf result = p * pow2n;
  v8sf zero = splat(0.0f);
  return underflow ? zero : result;
}

// C[4 x 16] (+)= A[4 x K] * B[K x 16]; A rows at stride lda, B rows at stride ldb, C at ldc.
ATTNPROF_INLINE void gemm_4x16(const float* __restrict a, int64_t lda, const float* __restrict b,
                               int64_t ldb, int64_t K, float* __restrict c, int64_t ldc,
                               bool accumulate) {
  v8sf c00 = splat(0), c01 = splat(0), c10 = splat(0), c11 = splat(0);
  v8sf c20 = splat(0), c21 = splat(0), c30 = splat(0), c31 = splat(0);
  const float* a0 = a;
  const float* a1 = a + lda;
  const float* a2 = a + 2 * lda;
  const float* a3 = a + 3 * lda;
  for (int64_t kk = 0; kk < K; ++kk) {
    const v8sf b0 = load8(b + kk * ldb);
    const v8sf b1 = load8(b + kk * ldb + 8);
    const v8sf x0 = splat_load(a0 + kk), x1 = splat_load(a1 + kk), x2 = splat_load(a2 + kk),
               x3 = splat_load(a3 + kk);
    c00 += x0 * b0; c01 += x0 * b1;
    c10 += x1 * b0; c11 += x1 * b1;
    c20 += x2 * b0; c21 += x2 * b1;
    c30 += x3 * b0; c31 += x3 * b1;
  }
  if (accumulate) {
    c00 += load8(c); c01 += load8(c + 8);
    c10 += load8(c + ldc); c11 += load8(c + ldc + 8);
    c20 += load8(c + 2 * ldc); c21 += load8(c + 2 * ldc + 8);
    c30 += load8(c + 3 * ldc); c31 += load8(c + 3 * ldc + 8);
  }
  store8(c, c00); store8(c + 8, c01);
  store8(c + ldc, c10); store8(c + ldc + 8, c11);
  store8(c + 2 * ldc, c20); store8(c + 2 * ldc + 8, c21);
  store8(c + 3 * ldc, c30); store8(c + 3 * ldc + 8, c31);
}

}  // namespace attnprof::heads_simd
