/*
 * decode.c -- TVMFFIAny to Python values, and the class of each type index.
 *
 * The rules are tvm_ffi_ref/convert.py's to_python/borrowed_to_python: POD
 * kinds become None/int/bool/float/str/bytes/c_void_p, dtype and Device (made
 * here as dtype.dtype_from_tuple and Device._from_pair make them; the tests
 * hold the two equal), a DLTensor* a Tensor view, a BigInt an int, an
 * OpaquePyObject the object it holds, and every other object the wrapper
 * class registered for its type index (object.register_class fills the table
 * here; an index nobody registered asks object.class_for_type_index, which
 * makes and registers a class from the type record).
 *
 * How a class is made from a handle is decided when it is registered
 * (FxWrapMode): most classes are Object._adopt, done here; String, Bytes and
 * Shape are what their _tvm_ffi_from_handle does (a str/bytes/tuple subclass
 * remembering the object in _tvm_ffi_cached_object), also done here because
 * every long string result goes through it; any other class with its own
 * _tvm_ffi_from_handle or _adopt is called in Python.
 */
#include "frontend.h"

#include <structmember.h>

typedef struct {
  PyObject* cls;
  int mode;
} FxClassEntry;

static FxClassEntry* classes;
static int32_t n_classes;

int fx_register_class(int32_t type_index, PyObject* cls, int mode) {
  if (type_index < 0) {
    PyErr_Format(PyExc_ValueError, "invalid type index %d", (int)type_index);
    return -1;
  }
  if (type_index >= n_classes) {
    int32_t size = n_classes ? n_classes : 256;
    FxClassEntry* grown;
    while (size <= type_index) size *= 2;
    grown = (FxClassEntry*)PyMem_Realloc(classes, sizeof(FxClassEntry) * (size_t)size);
    if (grown == NULL) {
      PyErr_NoMemory();
      return -1;
    }
    memset(grown + n_classes, 0, sizeof(FxClassEntry) * (size_t)(size - n_classes));
    classes = grown;
    n_classes = size;
  }
  Py_INCREF(cls);
  Py_XSETREF(classes[type_index].cls, cls);
  classes[type_index].mode = mode;
  return 0;
}

static FxClassEntry* class_entry(int32_t type_index) {
  PyObject *make, *cls;
  if (FX_LIKELY(type_index >= 0 && type_index < n_classes && classes[type_index].cls != NULL)) {
    return &classes[type_index];
  }
  /* never seen: object.class_for_type_index makes one and registers it */
  make = fx_hook(FX_HOOK_CLASS_FOR_INDEX);
  if (make == NULL) return NULL;
  cls = PyObject_CallFunction(make, "i", (int)type_index);
  if (cls == NULL) return NULL;
  Py_DECREF(cls);
  if (type_index >= 0 && type_index < n_classes && classes[type_index].cls != NULL) {
    return &classes[type_index];
  }
  PyErr_Format(PyExc_RuntimeError, "no class was registered for type index %d", (int)type_index);
  return NULL;
}

PyObject* fx_class_of_index(int32_t type_index) {
  FxClassEntry* entry = class_entry(type_index);
  return entry == NULL ? NULL : entry->cls;
}

/* cls(content) for str/bytes/tuple subclasses, then the object remembered beside it. */
PyObject* fx_native_with_object(PyTypeObject* base, PyObject* cls, PyObject* content,
                                void* handle) {
  PyObject *args, *self = NULL, *cached;
  if (content == NULL) goto fail;
  args = PyTuple_Pack(1, content);
  Py_DECREF(content);
  if (args == NULL) goto fail;
  self = base->tp_new((PyTypeObject*)cls, args, NULL); /* base.__new__(cls, content) */
  Py_DECREF(args);
  if (self == NULL) goto fail;
  cached = fx_object_adopt(fx_object_type, handle); /* Object._adopt(handle) */
  if (cached == NULL) {
    Py_DECREF(self);
    return NULL;
  }
  if (PyObject_SetAttr(self, fx_names.cached_object, cached) < 0) Py_CLEAR(self);
  Py_DECREF(cached);
  return self;
fail:
  fx_decref(handle);
  return NULL;
}

static PyObject* shape_content(void* handle) {
  const TVMFFIShapeCell* cell = FX_CELL(handle, TVMFFIShapeCell);
  PyObject* dims = PyTuple_New((Py_ssize_t)cell->size);
  size_t i;
  if (dims == NULL) return NULL;
  for (i = 0; i < cell->size; ++i) {
    PyObject* dim = PyLong_FromLongLong(cell->data[i]);
    if (dim == NULL) {
      Py_DECREF(dims);
      return NULL;
    }
    PyTuple_SET_ITEM(dims, (Py_ssize_t)i, dim);
  }
  return dims;
}

static PyObject* call_with_handle(PyObject* cls, PyObject* name, void* handle) {
  PyObject* address = PyLong_FromVoidPtr(handle);
  PyObject* result;
  if (address == NULL) {
    fx_decref(handle);
    return NULL;
  }
  result = PyObject_CallMethodOneArg(cls, name, address);
  Py_DECREF(address);
  return result;
}

static PyObject* wrap_as(PyObject* cls, int mode, void* handle) {
  switch (mode) {
    case FX_MODE_PLAIN:
      return fx_object_adopt((PyTypeObject*)cls, handle);
    case FX_MODE_STR: {
      const TVMFFIByteArray* text = FX_CELL(handle, TVMFFIByteArray);
      return fx_native_with_object(
          &PyUnicode_Type, cls,
          PyUnicode_DecodeUTF8(text->size ? text->data : "", (Py_ssize_t)text->size,
                               "surrogateescape"),
          handle);
    }
    case FX_MODE_BYTES: {
      const TVMFFIByteArray* data = FX_CELL(handle, TVMFFIByteArray);
      return fx_native_with_object(
          &PyBytes_Type, cls,
          PyBytes_FromStringAndSize(data->size ? data->data : "", (Py_ssize_t)data->size),
          handle);
    }
    case FX_MODE_SHAPE:
      return fx_native_with_object(&PyTuple_Type, cls, shape_content(handle), handle);
    case FX_MODE_FROM_HANDLE:
      return call_with_handle(cls, fx_names.from_handle, handle);
    default:
      return call_with_handle(cls, fx_names.adopt, handle);
  }
}

PyObject* fx_wrap_owned(void* handle, int32_t type_index) {
  FxClassEntry* entry = class_entry(type_index);
  PyObject *cls, *result;
  if (entry == NULL) {
    fx_decref(handle);
    return NULL;
  }
  /* held while in use: Python code run meanwhile could register another class */
  cls = entry->cls;
  Py_INCREF(cls);
  result = wrap_as(cls, entry->mode, handle);
  Py_DECREF(cls);
  return result;
}

/* ------------------------------------------------------------ values */

static PyObject* small_content(const TVMFFIAny* value, int is_str) {
  /* at most the 8 payload bytes, whatever small_str_len claims */
  Py_ssize_t size = value->small_str_len > 8 ? 8 : (Py_ssize_t)value->small_str_len;
  return is_str ? PyUnicode_DecodeUTF8(value->v_bytes, size, NULL)
                : PyBytes_FromStringAndSize(value->v_bytes, size);
}

/*
 * Where Device keeps _type and _index: the offsets of its two __slots__ (member
 * descriptors holding objects), found once, so that a Device is filled in place; 0 when
 * the class stores them otherwise (then they are set as attributes).
 */
static Py_ssize_t device_slot_offset[2];
static int device_slots_found;

static Py_ssize_t slot_offset(PyObject* cls, PyObject* name) {
  PyObject* descr = _PyType_Lookup((PyTypeObject*)cls, name);
  if (descr != NULL && Py_IS_TYPE(descr, &PyMemberDescr_Type) &&
      ((PyMemberDescrObject*)descr)->d_member->type == T_OBJECT_EX) {
    return ((PyMemberDescrObject*)descr)->d_member->offset;
  }
  return 0;
}

/* device.Device._from_pair: Device.__new__(Device), then _type and _index. */
PyObject* fx_make_device(DLDevice device) {
  PyObject *cls = fx_hook(FX_HOOK_DEVICE), *self, *values[2];
  PyObject* names[2] = {fx_names.type_, fx_names.index_};
  int i, status = 0;
  if (cls == NULL) return NULL;
  if (!device_slots_found) {
    device_slot_offset[0] = slot_offset(cls, fx_names.type_);
    device_slot_offset[1] = slot_offset(cls, fx_names.index_);
    device_slots_found = 1;
  }
  self = ((PyTypeObject*)cls)->tp_new((PyTypeObject*)cls, fx_names.empty_tuple, NULL);
  if (self == NULL) return NULL;
  /* DLDevice.device_type is an int32 (the enum may be unsigned in C): as ref and upstream read it */
  values[0] = PyLong_FromLong((long)(int32_t)device.device_type);
  values[1] = PyLong_FromLong((long)device.device_id);
  for (i = 0; i < 2; ++i) {
    if (values[i] == NULL) {
      status = -1;
    } else if (status == 0 && device_slot_offset[i] != 0) {
      PyObject** slot = (PyObject**)((char*)self + device_slot_offset[i]);
      Py_XSETREF(*slot, values[i]); /* the slot takes the reference */
      continue;
    } else if (status == 0 && PyObject_SetAttr(self, names[i], values[i]) < 0) {
      status = -1;
    }
    Py_XDECREF(values[i]);
  }
  if (status < 0) Py_CLEAR(self);
  return self;
}

/* The Python value of an inline (type index < 64) TVMFFIAny. */
static PyObject* decode_pod(const TVMFFIAny* value) {
  switch (value->type_index) {
    case kTVMFFINone:
      Py_RETURN_NONE;
    case kTVMFFIInt:
      return PyLong_FromLongLong(value->v_int64);
    case kTVMFFIBool:
      return PyBool_FromLong(value->v_int64 != 0);
    case kTVMFFIFloat:
      return PyFloat_FromDouble(value->v_float64);
    case kTVMFFISmallStr:
      return small_content(value, 1);
    case kTVMFFISmallBytes:
      return small_content(value, 0);
    case kTVMFFIOpaquePtr: {
      PyObject* c_void_p = fx_hook(FX_HOOK_C_VOID_P);
      PyObject *address, *result;
      if (c_void_p == NULL) return NULL;
      address = value->v_ptr ? PyLong_FromVoidPtr(value->v_ptr) : (Py_INCREF(Py_None), Py_None);
      if (address == NULL) return NULL;
      result = PyObject_CallOneArg(c_void_p, address);
      Py_DECREF(address);
      return result;
    }
    case kTVMFFIDataType:
      return fx_make_dtype(value->v_dtype);
    case kTVMFFIDevice:
      return fx_make_device(value->v_device);
    case kTVMFFIDLTensorPtr:
      return fx_tensor_view((const DLTensor*)value->v_ptr);
    case kTVMFFIRawStr:
      PyErr_SetString(PyExc_ValueError, "Return value cannot be RawStr");
      return NULL;
    case kTVMFFIByteArrayPtr:
      PyErr_SetString(PyExc_ValueError, "Return value cannot be ByteArrayPtr");
      return NULL;
    case kTVMFFIObjectRValueRef:
      PyErr_SetString(PyExc_ValueError, "Return value cannot be ObjectRValueRef");
      return NULL;
    default:
      PyErr_Format(PyExc_ValueError, "Unhandled type index %d", (int)value->type_index);
      return NULL;
  }
}

static PyObject* bigint_to_int(const TVMFFIAny* value) {
  TVMFFIByteArray words = TVMFFIBigIntGetContentByteArray(value);
  if (words.size == 0) return PyLong_FromLong(0);
  return _PyLong_FromByteArray((const unsigned char*)words.data, words.size, 1, 1);
}

static PyObject* unwrap_pyobject(void* handle) {
  PyObject* held = (PyObject*)FX_CELL(handle, TVMFFIOpaqueObjectCell)->handle;
  if (held == NULL) {
    PyErr_SetString(PyExc_ValueError, "PyObject is NULL");
    return NULL;
  }
  Py_INCREF(held);
  return held;
}

PyObject* fx_decode_owned(TVMFFIAny* value) {
  int32_t index = value->type_index;
  void* handle;
  PyObject* result;
  if (index < kTVMFFIStaticObjectBegin) return decode_pod(value);
  handle = value->v_ptr;
  if (index == kTVMFFIBigInt) {
    result = bigint_to_int(value);
  } else if (index == kTVMFFIOpaquePyObject) {
    result = unwrap_pyobject(handle);
  } else {
    return fx_wrap_owned(handle, index);
  }
  fx_decref(handle);
  return result;
}

PyObject* fx_decode_borrowed(const TVMFFIAny* value) {
  if (value->type_index >= kTVMFFIStaticObjectBegin) {
    TVMFFIAny owned = *value;
    fx_incref(owned.v_ptr);
    return fx_decode_owned(&owned);
  }
  if (value->type_index == kTVMFFIRawStr) {
    return PyUnicode_DecodeUTF8(value->v_c_str, (Py_ssize_t)strlen(value->v_c_str), NULL);
  }
  if (value->type_index == kTVMFFIByteArrayPtr) {
    const TVMFFIByteArray* array = (const TVMFFIByteArray*)value->v_ptr;
    return PyBytes_FromStringAndSize(array->size ? array->data : "", (Py_ssize_t)array->size);
  }
  if (value->type_index == kTVMFFIObjectRValueRef) {
    /* a moved argument: take over the reference in the caller's slot, leaving it NULL */
    void** slot = (void**)value->v_ptr;
    TVMFFIAny owned;
    if (*slot == NULL) {
      PyErr_SetString(PyExc_ValueError, "RValueRef already moved");
      return NULL;
    }
    fx_any_clear(&owned);
    owned.v_ptr = *slot;
    owned.type_index = fx_header_index(owned.v_ptr);
    *slot = NULL;
    return fx_decode_owned(&owned);
  }
  return decode_pod(value);
}
