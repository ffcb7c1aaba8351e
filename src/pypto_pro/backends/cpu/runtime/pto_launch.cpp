// PyPTO CPU backend: the cached-launch fast path in C (a CPython extension, built once per Python and
// toolchain next to the runtime library; backends/cpu/clauncher.py builds and loads it).
//
// `kernel[None, n]` returns a Bound (one per block count, cached by the kernel, so no closure is
// made per launch).  Calling it checks, in C, that the arguments match the kernel's latest frozen
// signature (a Frozen: the launch environment, every tensor's exact type, dtype, shape and device,
// every scalar's exact type), writes the kernel's int64 argument array on the stack (data pointers,
// shapes, strides, scalars) and calls the compiled `call_kernel` with the GIL released, as ctypes did.
// Anything else -- keywords, another signature, a non-torch tensor, a scalar that does not convert, a
// tensor torch cannot give a data pointer or sizes for (sparse, nested), a written tensor whose
// elements share memory -- goes to the Python launcher (`fallback`), which performs every check with its usual messages and
// may freeze a new signature.  Scalars are still checked by the Python `check_scalar` (same
// messages); a failing kernel reports through the compiled kernel's `raise_error`.
//
// Per launch the checks read each tensor's dtype, shape, is_cpu and is_contiguous() and its data
// pointer (through pto_torch.cpp where it is built, which also refuses negative and conjugate views).  The getset attributes are read through their descriptors resolved once on torch.Tensor
// (valid while the type's version tag is unchanged, as CPython's own attribute caches do), the data
// pointer through torch's C accessor for compiled launchers where torch has it (see `setup`).
// `Subscript` is `JitKernel.__getitem__` for the cached `kernel[None, n]` (a dict lookup in C).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

struct PtoError {  // backends/cpu/launcher.py PtoError
  int32_t kind, site;
  char message[1024];
};
using KernelFn = int (*)(const int64_t*, int64_t, PtoError*);

constexpr int kMaxNd = 16;

struct TensorArg {
  Py_ssize_t index;
  int64_t slot;
  int nd;
  int64_t shape[kMaxNd];
  int64_t strides[kMaxNd];  // contiguous strides of shape
  PyObject* dtype;          // owned
  bool written;             // the kernel writes it: its elements must not share memory
};

struct ScalarArg {
  Py_ssize_t index;
  int64_t slot;
  bool is_float;
  PyObject* type;  // owned: the exact Python type of the frozen call's value
  PyObject* spec;  // owned: the ParamSpec passed to check_scalar
};

// interned attribute names
PyObject *s_dtype, *s_shape, *s_is_cpu, *s_data_ptr, *s_is_contiguous, *s_stride, *s_last_report;
PyObject* g_env = nullptr;    // os.environ._data (bytes -> bytes), or nullptr: never fast
PyObject* g_names = nullptr;  // tuple of the launch environment's variable names (bytes)
// torch's C accessor of a tensor's data pointer (torch._C._dynamo.guards._torchinductor_pyobject_tensor_data_ptr,
// what torch.compile's own C++ launchers call), or nullptr: call `data_ptr()`
using DataPtrFn = void* (*)(PyObject*);
DataPtrFn g_data_ptr = nullptr;
// ours, built against the installed torch (runtime/pto_torch.cpp, backends/cpu/torchaccess.py), or nullptr:
// 1 with the data pointer of a tensor whose memory holds its values, 0 for a negative or conjugate view
// or a tensor without storage (the Python path reports it)
using PlainDataPtrFn = int (*)(PyObject*, int64_t*);
PlainDataPtrFn g_plain_data_ptr = nullptr;
PyObject* g_zero = nullptr;  // the int 0

// torch.Tensor's getset descriptors of dtype, shape and is_cpu, resolved on the type once: calling a
// descriptor's __get__ is what `a.dtype` does after its type lookup.  They stay valid while the type's
// version tag is unchanged (assigning an attribute of torch.Tensor or of a base gives a new tag);
// data descriptors cannot be shadowed by an instance's own attributes.
enum { kDtype, kShape, kIsCpu, kNumGet };
struct Access {
  PyTypeObject* type = nullptr;  // owned
  unsigned int version = 0;
  PyObject* get[kNumGet] = {};   // owned
};
Access g_access;

void resolve_access(PyTypeObject* t) {
  Py_CLEAR(g_access.type);
  for (auto& o : g_access.get) Py_CLEAR(o);
  PyObject* names[kNumGet] = {s_dtype, s_shape, s_is_cpu};
  PyObject* found[kNumGet] = {};
  for (int i = 0; i < kNumGet; ++i) {
    found[i] = _PyType_Lookup(t, names[i]);  // borrowed; gives the type a version tag
    if (!found[i] || !Py_IS_TYPE(found[i], &PyGetSetDescr_Type)) return;
  }
  if (!PyType_HasFeature(t, Py_TPFLAGS_VALID_VERSION_TAG)) return;
  for (int i = 0; i < kNumGet; ++i) Py_INCREF(found[i]), g_access.get[i] = found[i];
  Py_INCREF(t), g_access.type = t;
  g_access.version = t->tp_version_tag;
}

// a.dtype / a.shape / a.is_cpu: a new reference, or nullptr with an error set
inline PyObject* tensor_attr(PyObject* a, int i, PyObject* name) {
  PyTypeObject* t = Py_TYPE(a);
  if (t != g_access.type || t->tp_version_tag != g_access.version || !PyType_HasFeature(t, Py_TPFLAGS_VALID_VERSION_TAG)) {
    resolve_access(t);
    if (t != g_access.type) return PyObject_GetAttr(a, name);
  }
  PyObject* d = g_access.get[i];
  return Py_TYPE(d)->tp_descr_get(d, a, (PyObject*)t);
}

// a.data_ptr() as an integer in *out: 1 done, 0 not available here (use the Python path), -1 error set
inline int tensor_data_ptr(PyObject* a, int64_t* out) {
  if (g_plain_data_ptr) return g_plain_data_ptr(a, out);
  if (g_data_ptr) {
    try {
      *out = (int64_t)(intptr_t)g_data_ptr(a);
      return 1;
    } catch (...) {  // e.g. a tensor without storage: the Python launcher reports it
      return 0;
    }
  }
  PyObject* ptr = PyObject_CallMethodNoArgs(a, s_data_ptr);
  if (!ptr) return -1;
  *out = PyLong_AsLongLong(ptr);
  Py_DECREF(ptr);
  return PyErr_Occurred() ? -1 : 1;
}

// ------------------------------------------------------------------ Frozen
struct Frozen {
  PyObject_HEAD
  KernelFn fn;
  Py_ssize_t nargs;
  int64_t nslots;
  std::vector<TensorArg>* tensors;
  std::vector<ScalarArg>* scalars;
  PyObject* tensor_type;   // torch.Tensor
  PyObject* env;           // tuple: frozen values of g_names (bytes or None)
  PyObject* check_scalar;  // check_scalar(kernel_name, spec, value) -> value
  PyObject* kernel_name;
  PyObject* on_error;      // on_error(bytes of PtoError): raises
  PyObject* keep;          // keeps the kernel library loaded
};

void frozen_dealloc(PyObject* o) {
  Frozen* f = (Frozen*)o;
  if (f->tensors) {
    for (auto& t : *f->tensors) Py_XDECREF(t.dtype);
    delete f->tensors;
  }
  if (f->scalars) {
    for (auto& s : *f->scalars) {
      Py_XDECREF(s.type);
      Py_XDECREF(s.spec);
    }
    delete f->scalars;
  }
  Py_XDECREF(f->tensor_type);
  Py_XDECREF(f->env);
  Py_XDECREF(f->check_scalar);
  Py_XDECREF(f->kernel_name);
  Py_XDECREF(f->on_error);
  Py_XDECREF(f->keep);
  Py_TYPE(o)->tp_free(o);
}

PyTypeObject FrozenType = {PyVarObject_HEAD_INIT(nullptr, 0) "pto_launch.Frozen"};

// Frozen(fn_address, nargs, nslots, tensors, scalars, tensor_type, env, check_scalar, kernel_name,
//        on_error, keep): tensors = [(index, slot, dtype, shape tuple, written)], scalars = [(index, slot,
//        is_float, type, spec)]
PyObject* make_frozen(PyObject*, PyObject* args) {
  unsigned long long addr;
  Py_ssize_t nargs;
  long long nslots;
  PyObject *tensors, *scalars, *ttype, *env, *check, *name, *on_error, *keep;
  if (!PyArg_ParseTuple(args, "KnLO!O!OO!OOOO", &addr, &nargs, &nslots, &PyList_Type, &tensors, &PyList_Type,
                        &scalars, &ttype, &PyTuple_Type, &env, &check, &name, &on_error, &keep))
    return nullptr;
  Frozen* f = PyObject_New(Frozen, &FrozenType);
  if (!f) return nullptr;
  f->fn = (KernelFn)(uintptr_t)addr;
  f->nargs = nargs;
  f->nslots = nslots;
  f->tensors = new std::vector<TensorArg>();
  f->scalars = new std::vector<ScalarArg>();
  Py_INCREF(ttype), f->tensor_type = ttype;
  Py_INCREF(env), f->env = env;
  Py_INCREF(check), f->check_scalar = check;
  Py_INCREF(name), f->kernel_name = name;
  Py_INCREF(on_error), f->on_error = on_error;
  Py_INCREF(keep), f->keep = keep;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(tensors); ++i) {
    TensorArg t{};
    PyObject *dtype, *shape;
    int written;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(tensors, i), "nLOO!p", &t.index, &t.slot, &dtype, &PyTuple_Type, &shape,
                          &written))
      goto fail;
    t.written = written != 0;
    t.nd = (int)PyTuple_GET_SIZE(shape);
    if (t.nd > kMaxNd) {
      PyErr_SetString(PyExc_ValueError, "too many dimensions for the C launcher");
      goto fail;
    }
    int64_t st = 1;
    for (int d = t.nd - 1; d >= 0; --d) {
      t.shape[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
      t.strides[d] = st;
      st *= t.shape[d] > 1 ? t.shape[d] : 1;
    }
    if (PyErr_Occurred()) goto fail;
    Py_INCREF(dtype), t.dtype = dtype;
    f->tensors->push_back(t);
  }
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(scalars); ++i) {
    ScalarArg s{};
    int is_float;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(scalars, i), "nLpOO", &s.index, &s.slot, &is_float, &s.type, &s.spec))
      goto fail;
    s.is_float = is_float != 0;
    Py_INCREF(s.type);
    Py_INCREF(s.spec);
    f->scalars->push_back(s);
  }
  return (PyObject*)f;
fail:
  Py_DECREF(f);
  return nullptr;
}

// ------------------------------------------------------------------ Slot: a kernel's latest Frozen
struct Slot {
  PyObject_HEAD
  PyObject* frozen;  // Frozen or nullptr
};

void slot_dealloc(PyObject* o) {
  Py_XDECREF(((Slot*)o)->frozen);
  Py_TYPE(o)->tp_free(o);
}

PyObject* slot_set(PyObject* o, PyObject* value) {  // set(Frozen or None)
  Slot* s = (Slot*)o;
  if (value != Py_None && Py_TYPE(value) != &FrozenType) {
    PyErr_SetString(PyExc_TypeError, "Slot.set takes a Frozen or None");
    return nullptr;
  }
  PyObject* old = s->frozen;
  s->frozen = value == Py_None ? nullptr : (Py_INCREF(value), value);
  Py_XDECREF(old);
  Py_RETURN_NONE;
}

PyMethodDef slot_methods[] = {{"set", slot_set, METH_O, "the latest frozen signature (or None)"}, {}};
PyTypeObject SlotType = {PyVarObject_HEAD_INIT(nullptr, 0) "pto_launch.Slot"};

PyObject* make_slot(PyObject*, PyObject*) {
  Slot* s = PyObject_New(Slot, &SlotType);
  if (s) s->frozen = nullptr;
  return (PyObject*)s;
}

// ------------------------------------------------------------------ Bound: kernel[None, n]
struct Bound {
  PyObject_HEAD
  PyObject* slot;      // Slot
  PyObject* fallback;  // the Python launcher
  PyObject* jit;       // the JitKernel (last_report = None after a launch)
  int64_t block_dim;
  vectorcallfunc vectorcall;
};

void bound_dealloc(PyObject* o) {
  Bound* b = (Bound*)o;
  Py_XDECREF(b->slot);
  Py_XDECREF(b->fallback);
  Py_XDECREF(b->jit);
  Py_TYPE(o)->tp_free(o);
}

bool env_matches(PyObject* frozen_env) {
  const Py_ssize_t n = PyTuple_GET_SIZE(g_names);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyDict_GetItemWithError(g_env, PyTuple_GET_ITEM(g_names, i));  // borrowed
    PyObject* want = PyTuple_GET_ITEM(frozen_env, i);
    if (!v) {
      if (PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      if (want != Py_None) return false;
      continue;
    }
    if (v != want && (want == Py_None || PyObject_RichCompareBool(v, want, Py_EQ) != 1)) {
      PyErr_Clear();
      return false;
    }
  }
  return true;
}

// Whether two elements of a tensor (nd dims, element strides) may share an address: sorted by stride,
// each dim of more than one element must step past the extent of those below it (tensor_checks.py).
bool overlapping(int nd, const int64_t* shape, const int64_t* strides) {
  int64_t size[kMaxNd], step[kMaxNd];
  int n = 0;
  for (int d = 0; d < nd; ++d) {
    if (shape[d] == 0) return false;
    if (shape[d] == 1) continue;
    int k = n++;  // insertion sort by |stride|
    const int64_t st = strides[d] < 0 ? -strides[d] : strides[d];
    for (; k > 0 && step[k - 1] > st; --k) size[k] = size[k - 1], step[k] = step[k - 1];
    size[k] = shape[d], step[k] = st;
  }
  int64_t extent = 1;
  for (int k = 0; k < n; ++k) {
    if (step[k] < extent) return true;
    extent += step[k] * (size[k] - 1);
  }
  return false;
}

// 1: matched and buf written; 0: not this signature, or a tensor torch cannot describe here (the Python
// path checks it and says what is wrong); -1: a Python error is set
int fill(Frozen* f, PyObject* const* args, int64_t* buf) {
  for (auto& t : *f->tensors) {
    PyObject* a = args[t.index];
    if ((PyObject*)Py_TYPE(a) != f->tensor_type) return 0;
    PyObject* dtype = tensor_attr(a, kDtype, s_dtype);
    if (!dtype) return PyErr_Clear(), 0;
    Py_DECREF(dtype);  // dtypes are long-lived singletons; identity is the frozen key's equality
    if (dtype != t.dtype) return 0;
    PyObject* shape = tensor_attr(a, kShape, s_shape);
    if (!shape) return PyErr_Clear(), 0;  // e.g. a nested tensor has no sizes
    bool same = PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == t.nd;
    for (int d = 0; same && d < t.nd; ++d) {
      PyObject* n = PyTuple_GET_ITEM(shape, d);
      same = PyLong_CheckExact(n) && PyLong_AsLongLong(n) == t.shape[d];
    }
    Py_DECREF(shape);
    if (!same) {
      PyErr_Clear();
      return 0;
    }
    PyObject* cpu = tensor_attr(a, kIsCpu, s_is_cpu);
    if (!cpu) return PyErr_Clear(), 0;
    Py_DECREF(cpu);
    if (cpu != Py_True) return 0;
    const int got = tensor_data_ptr(a, &buf[t.slot]);
    if (got <= 0) return PyErr_Clear(), 0;  // e.g. a sparse tensor has no data pointer
    std::memcpy(buf + t.slot + 1, t.shape, sizeof(int64_t) * t.nd);
    PyObject* contig = PyObject_CallMethodNoArgs(a, s_is_contiguous);
    if (!contig) return PyErr_Clear(), 0;
    Py_DECREF(contig);
    if (contig == Py_True) {
      std::memcpy(buf + t.slot + 1 + t.nd, t.strides, sizeof(int64_t) * t.nd);
    } else {
      PyObject* st = PyObject_CallMethodNoArgs(a, s_stride);
      if (!st) return PyErr_Clear(), 0;
      if (!PyTuple_Check(st) || PyTuple_GET_SIZE(st) != t.nd) {
        Py_DECREF(st);
        return 0;
      }
      int64_t* strides = buf + t.slot + 1 + t.nd;
      for (int d = 0; d < t.nd; ++d) strides[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(st, d));
      Py_DECREF(st);
      if (PyErr_Occurred()) return -1;
      if (t.written && overlapping(t.nd, t.shape, strides)) return 0;  // e.g. expand(): the checked path refuses it
    }
  }
  for (auto& s : *f->scalars) {
    PyObject* v = args[s.index];
    if ((PyObject*)Py_TYPE(v) != s.type) return 0;
    PyObject* c = PyObject_CallFunctionObjArgs(f->check_scalar, f->kernel_name, s.spec, v, nullptr);
    if (!c) return -1;  // the checked path raises the same error
    if (s.is_float) {
      const double x = PyFloat_AsDouble(c);
      std::memcpy(&buf[s.slot], &x, sizeof x);
    } else {
      buf[s.slot] = PyLong_AsLongLong(c);
    }
    Py_DECREF(c);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return 0;
    }
  }
  return 1;
}

PyObject* bound_vectorcall(PyObject* o, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  Bound* b = (Bound*)o;
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject* fo = ((Slot*)b->slot)->frozen;
  if (fo && !kwnames && g_env) {
    Frozen* f = (Frozen*)fo;
    if (nargs == f->nargs && env_matches(f->env)) {
      Py_INCREF(fo);  // the slot may change while the GIL is released
      int64_t small[256];
      std::vector<int64_t> big;
      int64_t* buf = small;
      if (f->nslots > 256) {
        big.resize((size_t)f->nslots);
        buf = big.data();
      } else {
        std::memset(small, 0, sizeof(int64_t) * (size_t)(f->nslots > 0 ? f->nslots : 1));
      }
      const int ok = fill(f, args, buf);
      if (ok < 0) {
        Py_DECREF(fo);
        return nullptr;
      }
      if (ok > 0) {
        PtoError err;
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = f->fn(buf, b->block_dim, &err);
        Py_END_ALLOW_THREADS
        if (rc != 0) {
          PyObject* bytes = PyBytes_FromStringAndSize((const char*)&err, sizeof err);
          PyObject* r = bytes ? PyObject_CallOneArg(f->on_error, bytes) : nullptr;
          Py_XDECREF(bytes);
          Py_DECREF(fo);
          if (r) {  // on_error always raises; be safe if it did not
            Py_DECREF(r);
            PyErr_SetString(PyExc_RuntimeError, "kernel failed");
          }
          return nullptr;
        }
        Py_DECREF(fo);
        if (PyObject_SetAttr(b->jit, s_last_report, Py_None) < 0) return nullptr;
        Py_RETURN_NONE;
      }
      Py_DECREF(fo);
    }
  }
  return PyObject_Vectorcall(b->fallback, args, nargsf, kwnames);
}

PyTypeObject BoundType = {PyVarObject_HEAD_INIT(nullptr, 0) "pto_launch.Bound"};

// Bound(slot, fallback, jit, block_dim)
PyObject* make_bound(PyObject*, PyObject* args) {
  PyObject *slot, *fallback, *jit;
  long long block_dim;
  if (!PyArg_ParseTuple(args, "O!OOL", &SlotType, &slot, &fallback, &jit, &block_dim)) return nullptr;
  Bound* b = PyObject_New(Bound, &BoundType);
  if (!b) return nullptr;
  Py_INCREF(slot), b->slot = slot;
  Py_INCREF(fallback), b->fallback = fallback;
  Py_INCREF(jit), b->jit = jit;
  b->block_dim = block_dim;
  b->vectorcall = bound_vectorcall;
  return (PyObject*)b;
}

// setup(environ_data, names): the environment mapping and the names a launch depends on
PyObject* setup(PyObject*, PyObject* args) {
  PyObject *env, *names;
  if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &env, &PyTuple_Type, &names)) return nullptr;
  Py_XDECREF(g_env);
  Py_XDECREF(g_names);
  Py_INCREF(env), g_env = env;
  Py_INCREF(names), g_names = names;
  Py_RETURN_NONE;
}

// set_data_ptr(address): torch's `void* (PyObject*)` data pointer accessor (0: call data_ptr())
PyObject* set_data_ptr(PyObject*, PyObject* arg) {
  const unsigned long long addr = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred()) return nullptr;
  g_data_ptr = (DataPtrFn)(uintptr_t)addr;
  Py_RETURN_NONE;
}

// ------------------------------------------------------------------ Subscript: JitKernel.__getitem__
// `kernel[None, n]` / `kernel[n]` with an int n whose Bound the kernel already holds (its `_bound`
// dict) and no launch capture active (`capturing` of the capture module is 0): that Bound, from C.
// Anything else calls the Python __getitem__ (`fallback`), which does every check.  A method
// descriptor (Py_TPFLAGS_METHOD_DESCRIPTOR): called as (kernel, key).
struct Subscript {
  PyObject_HEAD
  PyObject* fallback;  // the Python __getitem__(self, key)
  PyObject* flags;     // the capture module's dict
  PyObject* bound;     // attribute name of the kernel's {n: Bound} dict
  PyObject* capturing; // key of the capture count in `flags`
  vectorcallfunc vectorcall;
};

void subscript_dealloc(PyObject* o) {
  Subscript* s = (Subscript*)o;
  Py_XDECREF(s->fallback);
  Py_XDECREF(s->flags);
  Py_XDECREF(s->bound);
  Py_XDECREF(s->capturing);
  Py_TYPE(o)->tp_free(o);
}

PyObject* subscript_fast(Subscript* s, PyObject* self, PyObject* key) {  // new reference or nullptr (no error)
  PyObject* count = PyDict_GetItemWithError(s->flags, s->capturing);  // borrowed
  if (count != g_zero) return nullptr;  // a capture is active (or the count is not the int 0)
  PyObject* n = nullptr;
  if (PyLong_CheckExact(key)) {
    n = key;
  } else if (PyTuple_CheckExact(key) && PyTuple_GET_SIZE(key) == 2 && PyTuple_GET_ITEM(key, 0) == Py_None &&
             PyLong_CheckExact(PyTuple_GET_ITEM(key, 1))) {
    n = PyTuple_GET_ITEM(key, 1);
  }
  if (!n) return nullptr;
  PyObject* d = PyObject_GetAttr(self, s->bound);
  if (!d) return nullptr;
  PyObject* b = PyDict_CheckExact(d) ? PyDict_GetItemWithError(d, n) : nullptr;  // borrowed
  Py_XINCREF(b);
  Py_DECREF(d);
  return b;
}

PyObject* subscript_vectorcall(PyObject* o, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  Subscript* s = (Subscript*)o;
  if (PyVectorcall_NARGS(nargsf) == 2 && !kwnames) {
    PyObject* b = subscript_fast(s, args[0], args[1]);
    if (b) return b;
    PyErr_Clear();
  }
  return PyObject_Vectorcall(s->fallback, args, nargsf, kwnames);
}

PyObject* subscript_get(PyObject* o, PyObject* obj, PyObject*) {  // Kernel.__getitem__ / kernel.__getitem__
  if (!obj || obj == Py_None) return Py_INCREF(o), o;
  return PyMethod_New(o, obj);
}

PyTypeObject SubscriptType = {PyVarObject_HEAD_INIT(nullptr, 0) "pto_launch.Subscript"};

// Subscript(fallback, capture_module_dict, bound_attribute, capturing_key)
PyObject* make_subscript(PyObject*, PyObject* args) {
  PyObject *fallback, *flags, *bound, *capturing;
  if (!PyArg_ParseTuple(args, "OO!UU", &fallback, &PyDict_Type, &flags, &bound, &capturing)) return nullptr;
  Subscript* s = PyObject_New(Subscript, &SubscriptType);
  if (!s) return nullptr;
  Py_INCREF(fallback), s->fallback = fallback;
  Py_INCREF(flags), s->flags = flags;
  Py_INCREF(bound), s->bound = bound;
  Py_INCREF(capturing), s->capturing = capturing;
  s->vectorcall = subscript_vectorcall;
  return (PyObject*)s;
}

// set_plain_data_ptr(address): pto_torch.cpp's `int (PyObject*, int64_t*)` accessor (0: none)
PyObject* set_plain_data_ptr(PyObject*, PyObject* arg) {
  const unsigned long long addr = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred()) return nullptr;
  g_plain_data_ptr = (PlainDataPtrFn)(uintptr_t)addr;
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"Frozen", make_frozen, METH_VARARGS, "a frozen launch signature"},
    {"Slot", make_slot, METH_NOARGS, "a kernel's latest frozen signature"},
    {"Bound", make_bound, METH_VARARGS, "kernel[None, n] with the fast path"},
    {"Subscript", make_subscript, METH_VARARGS, "JitKernel.__getitem__ with the cached kernel[None, n] in C"},
    {"setup", setup, METH_VARARGS, "the launch environment"},
    {"set_data_ptr", set_data_ptr, METH_O, "torch's C accessor of a tensor's data pointer (0: none)"},
    {"set_plain_data_ptr", set_plain_data_ptr, METH_O, "the accessor that refuses negative views (0: none)"},
    {}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "pto_launch", "PyPTO cpu launch fast path", -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit_pto_launch(void) {
  FrozenType.tp_basicsize = sizeof(Frozen);
  FrozenType.tp_dealloc = frozen_dealloc;
  FrozenType.tp_flags = Py_TPFLAGS_DEFAULT;
  SlotType.tp_basicsize = sizeof(Slot);
  SlotType.tp_dealloc = slot_dealloc;
  SlotType.tp_flags = Py_TPFLAGS_DEFAULT;
  SlotType.tp_methods = slot_methods;
  BoundType.tp_basicsize = sizeof(Bound);
  BoundType.tp_dealloc = bound_dealloc;
  BoundType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
  BoundType.tp_vectorcall_offset = offsetof(Bound, vectorcall);
  BoundType.tp_call = PyVectorcall_Call;
  SubscriptType.tp_basicsize = sizeof(Subscript);
  SubscriptType.tp_dealloc = subscript_dealloc;
  SubscriptType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  SubscriptType.tp_vectorcall_offset = offsetof(Subscript, vectorcall);
  SubscriptType.tp_call = PyVectorcall_Call;
  SubscriptType.tp_descr_get = subscript_get;
  if (PyType_Ready(&FrozenType) < 0 || PyType_Ready(&SlotType) < 0 || PyType_Ready(&BoundType) < 0 ||
      PyType_Ready(&SubscriptType) < 0)
    return nullptr;
  s_dtype = PyUnicode_InternFromString("dtype");
  s_shape = PyUnicode_InternFromString("shape");
  s_is_cpu = PyUnicode_InternFromString("is_cpu");
  s_data_ptr = PyUnicode_InternFromString("data_ptr");
  s_is_contiguous = PyUnicode_InternFromString("is_contiguous");
  s_stride = PyUnicode_InternFromString("stride");
  s_last_report = PyUnicode_InternFromString("last_report");
  g_zero = PyLong_FromLong(0);
  return PyModule_Create(&module);
}
