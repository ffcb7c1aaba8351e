// PyPTO CPU backend: the data pointer of a torch tensor that a kernel may read as plain memory, for the C
// launcher (runtime/pto_launch.cpp).  Built against the installed torch's headers (backends/cpu/torchaccess.py),
// once per torch, Python and toolchain, in the per-user cache.
//
// pto_plain_data_ptr(tensor, &ptr) -> 1 with the data pointer of a strided tensor whose memory holds its
// values (no negative or conjugate bit), else 0: the launch then takes the Python path, which says what
// is wrong.  It reads what `a.is_neg()` / `a.layout` / `a.data_ptr()` read, without Python calls.
#include <Python.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstdint>

extern "C" int pto_plain_data_ptr(PyObject* obj, int64_t* out) noexcept {
  try {
    const at::Tensor& t = THPVariable_Unpack(obj);
    if (t.layout() != c10::kStrided || t.is_neg() || t.is_conj() || !t.has_storage()) return 0;
    *out = (int64_t)(intptr_t)t.data_ptr();
    return 1;
  } catch (...) {  // a tensor torch gives no data pointer for: the Python launcher reports it
    return 0;
  }
}
