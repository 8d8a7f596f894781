/*
 * encode.c -- Python values to TVMFFIAny: the encoding every call uses.
 *
 * The rules and their order are tvm_ffi_ref/convert.py's (its table is the
 * spec; a kernel must not be able to tell which front end called it). The
 * choice is made once per Python type, as there: by
 * tvm_ffi_fast/compiled_core/convert.py's _choose_setter, which follows the reference's
 * dispatch order line by line and returns either one of the FxKind codes
 * encoded here, or a Python setter for the rare kinds (rvalue references,
 * protocols, exceptions, opaque objects, ...), which then writes into the
 * TVMFFIAny through ctypes. The choices are cached in a dict keyed by type.
 *
 * Before consulting the cache, the exact built-in types that dominate real
 * calls (None, int, float, str, bool, Object subclasses, bytes, list, tuple,
 * dict) go straight to their kind; each is what _choose_setter returns for
 * that type, so the shortcut cannot change a result. So do the framework
 * tensor type and the DLPack producer type met last (is_remembered: the one
 * check, which function.c's short path makes through
 * fx_encode_remembered_tensor), copies of their cache entries.
 *
 * Every slot starts zeroed, so the 16 bytes are exactly the reference's
 * (whose ctypes arrays are zero-initialised).
 */
#include "frontend.h"

/* ------------------------------------------------------------ scalars */

static int encode_object_handle(void* handle, TVMFFIAny* out) {
  out->type_index = fx_header_index(handle);
  out->v_ptr = handle;
  return 0;
}

static int encode_object(PyObject* value, TVMFFIAny* out) {
  void* handle = fx_object_handle_checked(value);
  if (handle == NULL) return -1;
  return encode_object_handle(handle, out);
}

/*
 * An Object argument: a Tensor viewing a borrowed DLTensor passes it as
 * kTVMFFIDLTensorPtr; a container remembering a framework's DLPack exchange
 * table hands it to the call (exchange.c).
 */
static int encode_object_argument(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  FxObject* o = (FxObject*)value;
  if (FX_UNLIKELY(o->handle == NULL) && PyObject_TypeCheck(value, fx_tensor_type) &&
      ((FxTensor*)value)->view != NULL) {
    out->type_index = kTVMFFIDLTensorPtr;
    out->v_ptr = (void*)((FxTensor*)value)->view;
    return 0;
  }
  if (encode_object(value, out) < 0) return -1;
  if (FX_UNLIKELY(o->exchange_api != NULL)) return fx_note_container(scope, o->exchange_api, o->handle);
  return 0;
}

/* An object made for this call: passed borrowed, released by the scope after it. */
int fx_encode_made(void* handle, TVMFFIAny* out, FxScope* scope) {
  if (handle == NULL) return -1;
  encode_object_handle(handle, out);
  return fx_scope_own(scope, handle);
}

/* Integers beyond int64: a BigInt of minimal two's-complement int64 words. */
static int encode_bigint(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  size_t bits = _PyLong_NumBits(value), n_words, i;
  int64_t* words;
  TVMFFIByteArray content;
  int status;
  if (bits == (size_t)-1 && PyErr_Occurred()) return -1;
  n_words = bits / 64 + 1; /* room for the sign bit */
  words = (int64_t*)PyMem_Calloc(n_words, sizeof(int64_t));
  if (words == NULL) {
    PyErr_NoMemory();
    return -1;
  }
#if PY_VERSION_HEX >= 0x030D0000
  status = _PyLong_AsByteArray((PyLongObject*)value, (unsigned char*)words, n_words * 8, 1, 1, 1);
#else
  status = _PyLong_AsByteArray((PyLongObject*)value, (unsigned char*)words, n_words * 8, 1, 1);
#endif
  if (status < 0) {
    PyMem_Free(words);
    return -1;
  }
  /* drop words that only repeat the sign of the one below */
  for (i = n_words; i > 1; --i) {
    if (!((words[i - 1] == 0 && words[i - 2] >= 0) || (words[i - 1] == -1 && words[i - 2] < 0))) {
      break;
    }
  }
  content.data = (const char*)words;
  content.size = i * sizeof(int64_t);
  status = TVMFFIBigIntFromByteArray(&content, out);
  PyMem_Free(words);
  if (status != 0) {
    fx_any_clear(out);
    fx_raise_last_error();
    return -1;
  }
  if (out->type_index >= kTVMFFIStaticObjectBegin) return fx_scope_own(scope, out->v_ptr);
  return 0;
}

static int encode_long(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  int overflow;
  long long x;
  /* An int of one digit is read in place: the common argument, and a third of a scalar
     call's encoding time went to the general conversion. */
  if (FX_LIKELY(fx_long_compact(value, &out->v_int64))) {
    out->type_index = kTVMFFIInt;
    return 0;
  }
  x = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (FX_LIKELY(overflow == 0)) {
    if (x == -1 && PyErr_Occurred()) return -1;
    out->type_index = kTVMFFIInt;
    out->v_int64 = x;
    return 0;
  }
  return encode_bigint(value, out, scope);
}

int fx_make_str_or_bytes(const char* data, Py_ssize_t size, int is_str, TVMFFIAny* out) {
  TVMFFIByteArray array;
  int status;
  if (size <= 7) {
    /* inline, NUL-padded: exactly what TVMFFIStringFromByteArray makes */
    out->type_index = is_str ? kTVMFFISmallStr : kTVMFFISmallBytes;
    out->small_str_len = (uint32_t)size;
    out->v_int64 = 0;
    if (size > 0) memcpy(out->v_bytes, data, (size_t)size);
    return 0;
  }
  array.data = data;
  array.size = (size_t)size;
  status = is_str ? TVMFFIStringFromByteArray(&array, out) : TVMFFIBytesFromByteArray(&array, out);
  if (status != 0) {
    fx_any_clear(out);
    fx_raise_last_error();
    return -1;
  }
  return 0;
}

static int encode_text(const char* data, Py_ssize_t size, int is_str, TVMFFIAny* out,
                       FxScope* scope) {
  if (fx_make_str_or_bytes(data, size, is_str, out) < 0) return -1;
  if (out->type_index >= kTVMFFIStaticObjectBegin) return fx_scope_own(scope, out->v_ptr);
  return 0;
}

static int encode_unicode(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  Py_ssize_t size;
  const char* data = PyUnicode_AsUTF8AndSize(value, &size); /* strict: surrogates raise */
  if (data == NULL) return -1;
  return encode_text(data, size, 1, out, scope);
}

/* A str subclass: value.encode("utf-8"), which the subclass may define. */
static int encode_str_subclass(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  PyObject* data = PyObject_CallMethod(value, "encode", "s", "utf-8");
  int status = -1;
  if (data == NULL) return -1;
  if (!PyBytes_Check(data)) {
    PyErr_Format(PyExc_TypeError, "%s.encode() returned %s, not bytes",
                 fx_type_name(Py_TYPE(value)), fx_type_name(Py_TYPE(data)));
  } else {
    status = encode_text(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), 1, out, scope);
  }
  Py_DECREF(data);
  return status;
}

/* bytes(value) for bytes subclasses and bytearray. */
static int encode_bytes_like(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  PyObject* copy;
  int status;
  if (PyByteArray_Check(value)) {
    return encode_text(PyByteArray_AS_STRING(value), PyByteArray_GET_SIZE(value), 0, out, scope);
  }
  copy = PyObject_Bytes(value);
  if (copy == NULL) return -1;
  status = encode_text(PyBytes_AS_STRING(copy), PyBytes_GET_SIZE(copy), 0, out, scope);
  Py_DECREF(copy);
  return status;
}

/*
 * item as a C integer field of type ctype, in [lowest, highest]; an OverflowError in
 * Cython's words otherwise (tvm_ffi_api/c_integers.py states the rule), never wrapped.
 */
static int narrow(PyObject* item, long long lowest, long long highest, const char* ctype,
                  long long* out) {
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(item, &overflow);
  if (value == -1 && overflow == 0 && PyErr_Occurred()) return -1;
  if (lowest >= 0 && (overflow < 0 || (overflow == 0 && value < 0))) {
    PyErr_Format(PyExc_OverflowError, "can't convert negative value to %s", ctype);
    return -1;
  }
  if (overflow != 0 && lowest < 0) {
    PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to C long");
    return -1;
  }
  if (overflow != 0) { /* beyond int64, non-negative: does it fit an unsigned long? */
    PyLong_AsUnsignedLongLong(item);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to C unsigned long");
      return -1;
    }
  }
  if (overflow != 0 || value < lowest || value > highest) {
    PyErr_Format(PyExc_OverflowError, "value too large to convert to %s", ctype);
    return -1;
  }
  *out = value;
  return 0;
}

/* DLDataType.lanes: a uint16, or a scalable vector's negative factor (as int16). */
static int narrow_lanes(PyObject* item, long long* out) {
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(item, &overflow);
  if (value == -1 && overflow == 0 && PyErr_Occurred()) return -1;
  if (overflow < 0 || (overflow == 0 && value < 0)) {
    return narrow(item, -0x8000, 0x7FFF, "int16_t", out);
  }
  return narrow(item, 0, 0xFFFF, "uint16_t", out);
}

#define FX_INT32_MIN (-0x7FFFFFFFLL - 1)
#define FX_INT32_MAX 0x7FFFFFFFLL

/* dtype: its (code, bits, lanes), as kTVMFFIDataType. */
static int encode_dtype(PyObject* value, TVMFFIAny* out) {
  PyObject *triple = PyObject_GetAttr(value, fx_names.dtype_tuple), *items;
  long long code, bits, lanes;
  int status = -1;
  if (triple == NULL) return -1;
  items = PySequence_Fast(triple, "a dtype tuple must be (code, bits, lanes)");
  Py_DECREF(triple);
  if (items == NULL) return -1;
  if (PySequence_Fast_GET_SIZE(items) != 3) {
    PyErr_Format(PyExc_ValueError, "too many values to unpack (expected 3)");
  } else if (narrow(PySequence_Fast_GET_ITEM(items, 0), 0, 0xFF, "uint8_t", &code) == 0 &&
             narrow(PySequence_Fast_GET_ITEM(items, 1), 0, 0xFF, "uint8_t", &bits) == 0 &&
             narrow_lanes(PySequence_Fast_GET_ITEM(items, 2), &lanes) == 0) {
    out->type_index = kTVMFFIDataType;
    out->v_dtype.code = (uint8_t)code;
    out->v_dtype.bits = (uint8_t)bits;
    out->v_dtype.lanes = (uint16_t)lanes;
    status = 0;
  }
  Py_DECREF(items);
  return status;
}

/*
 * Device: (value.dlpack_device_type(), value.index), as kTVMFFIDevice. For a
 * Device itself both are its _type and _index slots, read directly; a subclass
 * may redefine them, so it gets the calls.
 */
static int encode_device(PyObject* value, TVMFFIAny* out) {
  PyObject* device_class = fx_hook(FX_HOOK_DEVICE);
  int exact = (PyObject*)Py_TYPE(value) == device_class;
  PyObject* type = device_class == NULL ? NULL
                   : exact ? PyObject_GetAttr(value, fx_names.type_)
                         : PyObject_CallMethodNoArgs(value, fx_names.dlpack_device_type);
  PyObject* index = type ? PyObject_GetAttr(value, exact ? fx_names.index_ : fx_names.index) : NULL;
  long long device_type, device_id;
  int status = -1;
  if (index != NULL &&
      narrow(type, FX_INT32_MIN, FX_INT32_MAX, "int32_t", &device_type) == 0 &&
      narrow(index, FX_INT32_MIN, FX_INT32_MAX, "int32_t", &device_id) == 0) {
    out->type_index = kTVMFFIDevice;
    out->v_device.device_type = (DLDeviceType)device_type;
    out->v_device.device_id = (int32_t)device_id;
    status = 0;
  }
  Py_XDECREF(type);
  Py_XDECREF(index);
  return status;
}

/* String/Bytes/Shape: the object they came from, when they have one. */
static int encode_native(PyObject* value, FxKind kind, TVMFFIAny* out, FxScope* scope) {
  PyObject* cached = PyObject_GetAttr(value, fx_names.cached_object);
  int status;
  if (cached == NULL) return -1;
  if (cached != Py_None) {
    if (!PyObject_TypeCheck(cached, fx_cobject_type)) {
      PyErr_Format(PyExc_TypeError, "_tvm_ffi_cached_object must be an Object, not %s",
                   fx_type_name(Py_TYPE(cached)));
      status = -1;
    } else {
      status = encode_object(cached, out);
    }
  } else if (kind == FX_KIND_NATIVE_STR) {
    status = encode_unicode(value, out, scope);
  } else if (kind == FX_KIND_NATIVE_BYTES) {
    status = encode_text(PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value), 0, out, scope);
  } else {
    PyErr_SetString(PyExc_ValueError, "this Shape has no object behind it");
    status = -1;
  }
  Py_DECREF(cached);
  return status;
}

static int encode_void_p(PyObject* value, TVMFFIAny* out) {
  PyObject* address = PyObject_GetAttr(value, fx_names.value);
  void* pointer = NULL;
  if (address == NULL) return -1;
  if (address != Py_None) pointer = PyLong_AsVoidPtr(address);
  Py_DECREF(address);
  if (pointer == NULL && PyErr_Occurred()) return -1;
  out->type_index = kTVMFFIOpaquePtr;
  out->v_ptr = pointer;
  return 0;
}

/* ------------------------------------------------------------ dispatch */

static PyObject* kind_cache;

PyObject* fx_kind_cache(void) {
  if (kind_cache == NULL) kind_cache = PyDict_New();
  return kind_cache;
}

/*
 * A DLPack producer: from_dlpack(value). Upstream's rule for one not on the CPU, once the
 * call already has a device: a producer naming its stream (__tvm_ffi_env_stream__) makes
 * it, and its device, the call's.
 */
static int encode_producer(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  void* handle = fx_tensor_from_dlpack(value, 0, 0);
  const DLTensor* tensor;
  PyObject* stream;
  int found;
  if (fx_encode_made(handle, out, scope) < 0) return -1;
  tensor = FX_CELL(handle, DLTensor);
  if (tensor->device.device_type == kDLCPU || scope->device_type == -1) return 0;
  found = fx_has_attr(value, fx_names.env_stream);
  if (found <= 0) return found;
  stream = PyObject_CallMethodNoArgs(value, fx_names.env_stream);
  if (stream == NULL) return -1;
  scope->device_type = (int32_t)tensor->device.device_type;
  scope->device_id = tensor->device.device_id;
  scope->stream = PyLong_AsVoidPtr(stream);
  Py_DECREF(stream);
  return PyErr_Occurred() ? -1 : 0;
}

static int encode_kind(long kind, PyObject* value, TVMFFIAny* out, FxScope* scope) {
  switch (kind) {
    case FX_KIND_NONE:
      return 0;
    case FX_KIND_OBJECT:
      return encode_object_argument(value, out, scope);
    case FX_KIND_DLPACK:
      return encode_producer(value, out, scope);
    case FX_KIND_BOOL: {
      int truth = PyObject_IsTrue(value);
      if (truth < 0) return -1;
      out->type_index = kTVMFFIBool;
      out->v_int64 = truth;
      return 0;
    }
    case FX_KIND_INT: {
      PyObject* number = PyNumber_Long(value); /* int(value) */
      int status;
      if (number == NULL) return -1;
      status = encode_long(number, out, scope);
      Py_DECREF(number);
      return status;
    }
    case FX_KIND_FLOAT: {
      PyObject* number = PyNumber_Float(value); /* float(value) */
      if (number == NULL) return -1;
      out->type_index = kTVMFFIFloat;
      out->v_float64 = PyFloat_AS_DOUBLE(number);
      Py_DECREF(number);
      return 0;
    }
    case FX_KIND_DTYPE:
      return encode_dtype(value, out);
    case FX_KIND_DEVICE:
      return encode_device(value, out);
    case FX_KIND_NATIVE_STR:
    case FX_KIND_NATIVE_BYTES:
    case FX_KIND_NATIVE_SHAPE:
      return encode_native(value, (FxKind)kind, out, scope);
    case FX_KIND_STR:
      return encode_str_subclass(value, out, scope);
    case FX_KIND_BYTES:
      return encode_bytes_like(value, out, scope);
    case FX_KIND_SEQUENCE:
      return fx_encode_sequence(value, out, scope);
    case FX_KIND_DICT:
      return fx_encode_dict(value, out, scope);
    case FX_KIND_VOID_P:
      return encode_void_p(value, out);
    case FX_KIND_CALLABLE:
      return fx_encode_made(fx_function_from_callable(value, NULL), out, scope);
    default:
      PyErr_Format(PyExc_SystemError, "unknown argument kind %ld", kind);
      return -1;
  }
}

/* A rare kind: its Python setter writes into *out through ctypes (convert._fallback_set). */
static int encode_with_python(PyObject* python_setter, PyObject* value, TVMFFIAny* out,
                              FxScope* scope) {
  PyObject *py_scope = fx_scope_python(scope), *fallback, *address, *done;
  PyObject* args[4];
  if (py_scope == NULL) return -1;
  fallback = fx_hook(FX_HOOK_FALLBACK_SET);
  if (fallback == NULL) return -1;
  address = PyLong_FromVoidPtr(out);
  if (address == NULL) return -1;
  args[0] = python_setter;
  args[1] = address;
  args[2] = value;
  args[3] = py_scope;
  /* the setter may learn the framework context (a torch tensor, a nested value): it sees
   * the call's and hands it back */
  if (fx_context_to_python(scope, py_scope) < 0) {
    Py_DECREF(address);
    return -1;
  }
  done = PyObject_Vectorcall(fallback, args, 4, NULL);
  Py_DECREF(address);
  if (done == NULL) return -1;
  Py_DECREF(done);
  return fx_context_from_python(scope, py_scope);
}

/*
 * The framework tensor type met last and its exchange table, and the DLPack producer type
 * (NumPy's ndarray, say) met last: copies of their kind-cache entries, checked before
 * anything else but the built-in types (an Object is never given one), so that a call taking
 * such tensors skips the dict lookup.
 */
static PyTypeObject* last_framework_type;
static const DLPackExchangeAPI* last_framework_api;
static PyTypeObject* last_producer_type;

static void remember_type(PyTypeObject** slot, PyTypeObject* type) {
  Py_INCREF(type);
  Py_XSETREF(*slot, type);
}

/* Whether values of type are encoded as the remembered tensor types' (fx_encode and
 * fx_encode_remembered_tensor check the same two types, then encode_remembered encodes). */
static inline int is_remembered(PyTypeObject* type) {
  return type == last_framework_type || type == last_producer_type;
}

/* A value of a remembered type (is_remembered) into *out, zeroed: 0, or -1 with an exception. */
static inline int encode_remembered(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  if (Py_TYPE(value) == last_framework_type) {
    return fx_encode_framework_tensor(last_framework_api, value, out, scope);
  }
  return encode_producer(value, out, scope);
}

int fx_encode_remembered_tensor(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  if (!is_remembered(Py_TYPE(value))) return 0;
  fx_any_clear(out);
  return encode_remembered(value, out, scope) < 0 ? -1 : 1;
}

static int encode_chosen(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  PyObject* type = (PyObject*)Py_TYPE(value);
  PyObject* choice = PyDict_GetItemWithError(kind_cache, type);
  int status;
  if (choice != NULL) {
    Py_INCREF(choice);
  } else {
    PyObject* chooser;
    if (PyErr_Occurred()) return -1;
    chooser = fx_hook(FX_HOOK_CHOOSE_SETTER);
    if (chooser == NULL) return -1;
    choice = PyObject_CallOneArg(chooser, value);
    if (choice == NULL) return -1;
    if (PyDict_SetItem(kind_cache, type, choice) < 0) {
      Py_DECREF(choice);
      return -1;
    }
  }
  if (PyLong_CheckExact(choice)) {
    long kind = PyLong_AsLong(choice);
    if (kind == FX_KIND_DLPACK) remember_type(&last_producer_type, (PyTypeObject*)type);
    status = encode_kind(kind, value, out, scope);
  } else if (PyCapsule_CheckExact(choice)) { /* a framework tensor type's exchange table */
    const DLPackExchangeAPI* api = fx_exchange_choice(choice);
    remember_type(&last_framework_type, (PyTypeObject*)type);
    last_framework_api = api;
    status = fx_encode_framework_tensor(api, value, out, scope);
  } else {
    status = encode_with_python(choice, value, out, scope);
  }
  Py_DECREF(choice);
  return status;
}

int fx_encode(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  PyTypeObject* type = Py_TYPE(value);
  fx_any_clear(out);
  if (value == Py_None) return 0;
  if (type == &PyLong_Type) return encode_long(value, out, scope);
  if (type == &PyFloat_Type) {
    out->type_index = kTVMFFIFloat;
    out->v_float64 = PyFloat_AS_DOUBLE(value);
    return 0;
  }
  if (type == &PyUnicode_Type) return encode_unicode(value, out, scope);
  if (type == &PyBool_Type) {
    out->type_index = kTVMFFIBool;
    out->v_int64 = value == Py_True;
    return 0;
  }
  if (is_remembered(type)) return encode_remembered(value, out, scope);
  if (PyObject_TypeCheck(value, fx_cobject_type)) return encode_object_argument(value, out, scope);
  if (type == &PyBytes_Type) {
    return encode_text(PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value), 0, out, scope);
  }
  if (type == &PyList_Type || type == &PyTuple_Type) return fx_encode_sequence(value, out, scope);
  if (type == &PyDict_Type) return fx_encode_dict(value, out, scope);
  return encode_chosen(value, out, scope);
}

int fx_encode_owned(PyObject* value, TVMFFIAny* out) {
  FxScope scope;
  int status, owned = 0;
  fx_scope_init(&scope, NULL);
  status = fx_encode(value, out, &scope);
  if (status == 0) {
    if (out->type_index == kTVMFFIObjectRValueRef) {
      /*
       * `return obj._move()`: the result takes over the reference in obj's slot
       * (the scope's fixup then empties obj), as upstream's AnyView -> Any does.
       */
      void** slot = (void**)out->v_ptr;
      void* handle = *slot;
      if (handle == NULL) {
        PyErr_SetString(PyExc_ValueError, "RValueRef already moved");
        status = -1;
      } else {
        *slot = NULL;
        out->type_index = fx_header_index(handle);
        out->v_ptr = handle;
        owned = 1;
      }
    } else if (out->type_index >= kTVMFFIStaticObjectBegin) {
      fx_incref(out->v_ptr);
      owned = 1;
    }
  }
  if (fx_scope_close(&scope) < 0) status = -1;
  if (status < 0) {
    /* never leave a half-made value where the caller's result destructor would release it */
    if (owned) fx_decref(out->v_ptr);
    fx_any_clear(out);
  }
  return status;
}
