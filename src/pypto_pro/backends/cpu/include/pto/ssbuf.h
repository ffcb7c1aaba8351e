// PyPTO CPU backend: SSBUF, the block's shared scalar buffer (pl.ssbuf_store / pl.ssbuf_load; ops/ssbuf.py).
#pragma once
#include "core.h"
#include "tile.h"
#include <type_traits>

namespace pto {

// The first byte of a copy of `n` bytes at SSBUF byte `off` (the interpreter's checks and messages).
inline int64_t ssbuf_range(Core& C, const char* what, int64_t off, int64_t n, int64_t cap) {
  if (off % 4)
    fail(C, "%s: SSBUF offset %lld is not a multiple of 4 (the struct is copied in u32 words)", what, (long long)off);
  if (off < 0 || off + n > cap || cap > SSBUF_BYTES)
    fail(C, "%s: bytes [%lld, %lld) of the struct leave the %lld-byte SSBUF", what, (long long)off,
         (long long)(off + n), (long long)cap);
  return off;
}

// Field `v` stored as T at byte `at` of a struct image.
template <class T, class V> inline void ssbuf_field(uint8_t* img, int64_t at, V v) {
  T x;
  if constexpr (std::is_same<T, bool>::value) x = (bool)v;
  else if constexpr (std::is_floating_point<V>::value) x = from_double<T>((double)v);
  else x = from_int<T>((int64_t)v);
  std::memcpy(img + at, &x, sizeof(T));
}

inline void ssbuf_put(Core& C, int64_t off, const uint8_t* img, int64_t n, int64_t cap) {
  std::memcpy(C.blk->ssbuf + ssbuf_range(C, "pl.ssbuf_store", off, n, cap), img, (size_t)n);
}

// The field of type T at byte `at` of the struct copied (n bytes) from SSBUF byte `off`, in compute type.
template <class T> inline ct<T> ssbuf_get(Core& C, int64_t off, int64_t at, int64_t n, int64_t cap) {
  const uint8_t* p = C.blk->ssbuf + ssbuf_range(C, "pl.ssbuf_load", off, n, cap) + at;
  if constexpr (std::is_same<T, bool>::value) return *p != 0;
  else {
    T x;
    std::memcpy(&x, p, sizeof(T));
    return ld<T>(x);
  }
}

}  // namespace pto
