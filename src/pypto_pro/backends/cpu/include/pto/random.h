// PyPTO CPU backend: the Philox4x32-10 word generator behind pypto.uniform / pypto.normal
// (the internal tile op "philox", ops/random.py, which documents the stream).
#pragma once
#include <cstdint>

#include "tile.h"

namespace pto {

// Word w of the stream of (key, counter): lane w & 3 of the block of counter (w >> 2, counter).
inline uint32_t philox_word(uint64_t w, uint64_t key, uint64_t counter) {
  const uint64_t block = w >> 2;
  uint32_t c0 = (uint32_t)block, c1 = (uint32_t)(block >> 32), c2 = (uint32_t)counter,
           c3 = (uint32_t)(counter >> 32);
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = (uint64_t)c0 * 0xD2511F53u, p1 = (uint64_t)c2 * 0xCD9E8D57u;
    const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c0 = n0;
    c1 = (uint32_t)p1;
    c2 = n2;
    c3 = (uint32_t)p0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  const uint32_t lanes[4] = {c0, c1, c2, c3};
  return lanes[w & 3];
}

template <class TS>
inline void philox(Core& C, const Tile<int32_t>& d, const Tile<TS>& s, uint64_t key, uint64_t counter) {
  int vr, vc;
  window(C, d, vr, vc, s);
  ew(C, d, vr, vc, [&C, key, counter](TS w) {
    if (w < 0) fail(C, "philox: a negative word index");
    return (int32_t)philox_word((uint64_t)w, key, counter);
  }, s);
}

}  // namespace pto
