/*
 * pyapi.c -- the functions of tvm_ffi_fast._frontend that the Python modules call.
 *
 * tvm_ffi_fast/compiled_core/{object,convert,function,shortcuts}.py present
 * the core to the shared API modules under the names tvm_ffi_ref's core has;
 * they are thin, and each operation on a hot path is one call to a function
 * here. Addresses of TVMFFIAny slots come from ctypes (the shared modules
 * hold abi.TVMFFIAny structs), handles as ints, as everywhere in the API.
 */
#include "frontend.h"

static PyObject* handle_or_none(void* handle) {
  if (handle == NULL) Py_RETURN_NONE;
  return PyLong_FromVoidPtr(handle);
}

/*
 * Moves a trailing `mutable=` keyword (the shared modules pass it by name) into args[index];
 * `merged` must have room for index + 1 entries. Returns the argument count, or -1.
 */
static Py_ssize_t with_mutable_keyword(const char* name, PyObject* const* args, Py_ssize_t nargs,
                                       PyObject* kwnames, Py_ssize_t index, PyObject** merged) {
  Py_ssize_t i;
  if (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) {
    for (i = 0; i < nargs && i <= index; ++i) merged[i] = args[i];
    return nargs;
  }
  if (PyTuple_GET_SIZE(kwnames) != 1 || nargs != index ||
      PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "mutable") != 0) {
    PyErr_Format(PyExc_TypeError, "%s() takes its arguments positionally, or mutable= by name",
                 name);
    return -1;
  }
  for (i = 0; i < nargs; ++i) merged[i] = args[i];
  merged[index] = args[nargs];
  return index + 1;
}

static int check_nargs(const char* name, Py_ssize_t nargs, Py_ssize_t low, Py_ssize_t high) {
  if (nargs < low || nargs > high) {
    PyErr_Format(PyExc_TypeError, "%s() takes %zd to %zd arguments (%zd given)", name, low, high,
                 nargs);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------ classes */

static PyObject* register_class(PyObject* self, PyObject* args) {
  int type_index, mode;
  PyObject* cls;
  (void)self;
  if (!PyArg_ParseTuple(args, "iO!i:register_class", &type_index, &PyType_Type, &cls, &mode)) {
    return NULL;
  }
  if (fx_register_class(type_index, cls, mode) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject* wrap_owned(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  void* handle;
  int32_t type_index;
  (void)self;
  if (check_nargs("wrap_owned", nargs, 1, 2) < 0 || fx_address_arg(args[0], &handle) < 0) return NULL;
  if (handle == NULL) {
    PyErr_SetString(PyExc_ValueError, "wrap_owned: the handle is NULL");
    return NULL;
  }
  if (nargs == 2 && args[1] != Py_None) {
    long index = PyLong_AsLong(args[1]);
    if (index == -1 && PyErr_Occurred()) return NULL;
    type_index = (int32_t)index;
  } else {
    type_index = fx_header_index(handle);
  }
  return fx_wrap_owned(handle, type_index);
}

static PyObject* type_index_of(PyObject* self, PyObject* arg) {
  void* handle;
  (void)self;
  if (fx_address_arg(arg, &handle) < 0) return NULL;
  if (handle == NULL) {
    PyErr_SetString(PyExc_ValueError, "type_index_of: the handle is NULL");
    return NULL;
  }
  return PyLong_FromLong(fx_header_index(handle));
}

static PyObject* incref(PyObject* self, PyObject* arg) {
  void* handle;
  (void)self;
  if (fx_address_arg(arg, &handle) < 0) return NULL;
  if (handle != NULL) fx_incref(handle);
  Py_RETURN_NONE;
}

static PyObject* decref(PyObject* self, PyObject* arg) {
  void* handle;
  (void)self;
  if (fx_address_arg(arg, &handle) < 0) return NULL;
  if (handle != NULL) fx_decref(handle);
  Py_RETURN_NONE;
}

/* ------------------------------------------------------------ conversion */

static PyObject* set_arg(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  void* address;
  FxScope scope;
  int status;
  (void)self;
  if (check_nargs("set_arg", nargs, 3, 3) < 0 || fx_address_arg(args[0], &address) < 0) return NULL;
  status = fx_scope_init(&scope, args[2]);
  if (status == 0) status = fx_encode(args[1], (TVMFFIAny*)address, &scope);
  if (fx_scope_close(&scope) < 0 || status < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject* pack_into(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  void* address;
  PyObject* values;
  FxScope scope;
  Py_ssize_t i;
  int status = 0;
  (void)self;
  if (check_nargs("pack_into", nargs, 3, 3) < 0 || fx_address_arg(args[0], &address) < 0) return NULL;
  values = PySequence_Fast(args[1], "pack_into: expected a sequence of arguments");
  if (values == NULL) return NULL;
  status = fx_scope_init(&scope, args[2]);
  for (i = 0; status == 0 && i < PySequence_Fast_GET_SIZE(values); ++i) {
    status = fx_encode(PySequence_Fast_GET_ITEM(values, i), (TVMFFIAny*)address + i, &scope);
  }
  Py_DECREF(values);
  if (fx_scope_close(&scope) < 0 || status < 0) return NULL;
  Py_RETURN_NONE;
}

/* (address, exchange_api=0, strict=False) of the decoders below */
static int decode_args(const char* name, PyObject* const* args, Py_ssize_t nargs, void** address,
                       void** api, int* strict) {
  *api = NULL;
  *strict = 0;
  if (check_nargs(name, nargs, 1, 3) < 0 || fx_address_arg(args[0], address) < 0 ||
      (nargs >= 2 && fx_address_arg(args[1], api) < 0)) {
    return -1;
  }
  if (nargs == 3 && (*strict = PyObject_IsTrue(args[2])) < 0) return -1;
  return 0;
}

static PyObject* to_python_at(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  void *address, *api;
  int strict;
  (void)self;
  if (decode_args("to_python_at", args, nargs, &address, &api, &strict) < 0) return NULL;
  return fx_decode_owned_api((TVMFFIAny*)address, (const DLPackExchangeAPI*)api, strict);
}

static PyObject* borrowed_to_python_at(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  void *address, *api;
  int strict;
  (void)self;
  if (decode_args("borrowed_to_python_at", args, nargs, &address, &api, &strict) < 0) return NULL;
  return fx_decode_borrowed_api((const TVMFFIAny*)address, (const DLPackExchangeAPI*)api, strict);
}

static PyObject* to_owned_any_at(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  void* address;
  (void)self;
  if (check_nargs("to_owned_any_at", nargs, 2, 2) < 0 || fx_address_arg(args[1], &address) < 0) {
    return NULL;
  }
  if (fx_encode_owned(args[0], (TVMFFIAny*)address) < 0) return NULL;
  Py_RETURN_NONE;
}

/* function.wrap_callable: a new Function calling func, whatever func is (convert's rule). */
static PyObject* wrap_callable(PyObject* self, PyObject* func) {
  void* handle;
  (void)self;
  handle = fx_function_from_callable(func, NULL);
  if (handle == NULL) return NULL;
  return fx_object_adopt(fx_function_type, handle);
}

/* function.wrap_callable(func, exchange_api): Tensor arguments reach func through the table. */
static PyObject* wrap_callable_with(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  void *handle, *api;
  (void)self;
  if (check_nargs("wrap_callable", nargs, 1, 2) < 0) return NULL;
  if (nargs < 2) return wrap_callable(NULL, args[0]);
  if (fx_address_arg(args[1], &api) < 0) return NULL;
  handle = fx_function_from_callable(args[0], (const DLPackExchangeAPI*)api);
  if (handle == NULL) return NULL;
  return fx_object_adopt(fx_function_type, handle);
}

static PyObject* convert_to_function(PyObject* self, PyObject* func) {
  if (PyObject_TypeCheck(func, fx_function_type)) {
    Py_INCREF(func);
    return func;
  }
  if (!PyCallable_Check(func)) {
    PyErr_Format(PyExc_TypeError, "expected a callable, got %s", fx_type_name(Py_TYPE(func)));
    return NULL;
  }
  return wrap_callable(self, func);
}

/* ------------------------------------------------------------ calls and errors */

static PyObject* raise_last_error(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return fx_raise_last_error();
}

static PyObject* take_last_error(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return fx_take_last_error();
}

static PyObject* finish_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  void *address, *api = NULL;
  long status;
  (void)self;
  if (check_nargs("finish_call", nargs, 2, 3) < 0 || fx_address_arg(args[1], &address) < 0 ||
      (nargs == 3 && fx_address_arg(args[2], &api) < 0)) {
    return NULL;
  }
  status = PyLong_AsLong(args[0]);
  if (status == -1 && PyErr_Occurred()) return NULL;
  return fx_finish_call((int)status, (TVMFFIAny*)address, (const DLPackExchangeAPI*)api);
}

/* ------------------------------------------------------------ shortcuts */

/* new_array_handle(values, context=None): context, a CallScope, takes up the elements'
 * framework context. */
static PyObject* new_array_handle(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  PyObject* items;
  FxScope context;
  void* handle;
  int has_context = nargs == 2 && args[1] != Py_None;
  (void)self;
  if (check_nargs("new_array_handle", nargs, 1, 2) < 0) return NULL;
  if (has_context && fx_scope_init(&context, args[1]) < 0) return NULL;
  items = PySequence_Fast(args[0], "new_array_handle: expected a sequence");
  if (items == NULL) return NULL;
  handle = fx_new_array(PySequence_Fast_ITEMS(items), PySequence_Fast_GET_SIZE(items),
                        has_context ? &context : NULL);
  Py_DECREF(items);
  if (has_context && fx_context_to_python(&context, args[1]) < 0 && handle != NULL) {
    fx_decref(handle);
    return NULL;
  }
  return handle == NULL ? NULL : PyLong_FromVoidPtr(handle);
}

static PyObject* new_map_handle(PyObject* self, PyObject* const* given, Py_ssize_t nargs,
                                PyObject* kwnames) {
  PyObject *flat, *args[2];
  void* handle;
  int mutable_;
  (void)self;
  nargs = with_mutable_keyword("new_map_handle", given, nargs, kwnames, 1, args);
  if (nargs < 0 || check_nargs("new_map_handle", nargs, 2, 2) < 0) return NULL;
  mutable_ = PyObject_IsTrue(args[1]);
  if (mutable_ < 0) return NULL;
  flat = fx_flatten_pairs(args[0]);
  if (flat == NULL) return NULL;
  handle = fx_new_map(PySequence_Fast_ITEMS(flat), PySequence_Fast_GET_SIZE(flat), mutable_, NULL);
  Py_DECREF(flat);
  return handle == NULL ? NULL : PyLong_FromVoidPtr(handle);
}

/* The handle of a container argument (a Python error and NULL when empty or not one). */
static void* container_handle(const char* name, PyObject* container) {
  if (!PyObject_TypeCheck(container, fx_cobject_type)) {
    PyErr_Format(PyExc_TypeError, "%s: expected a container, got %s", name,
                 fx_type_name(Py_TYPE(container)));
    return NULL;
  }
  if (((FxObject*)container)->handle == NULL) {
    PyErr_Format(PyExc_ValueError, "%s: the container is empty", name);
  }
  return ((FxObject*)container)->handle;
}

static PyObject* map_lookup(PyObject* self, PyObject* const* given, Py_ssize_t nargs,
                            PyObject* kwnames) {
  TVMFFIAny packed[2], result;
  FxScope scope;
  PyObject* args[4];
  void *map, *func, *marker;
  int mutable_, status;
  (void)self;
  nargs = with_mutable_keyword("map_lookup", given, nargs, kwnames, 3, args);
  if (nargs < 0 || check_nargs("map_lookup", nargs, 4, 4) < 0 ||
      (map = container_handle("map_lookup", args[0])) == NULL) {
    return NULL;
  }
  mutable_ = PyObject_IsTrue(args[3]);
  if (mutable_ < 0) return NULL;
  func = fx_global(mutable_ ? FX_G_DICT_GET_ITEM_OR_MISSING : FX_G_MAP_GET_ITEM_OR_MISSING);
  marker = fx_missing_marker();
  if (func == NULL || marker == NULL) return NULL;
  fx_any_clear(&packed[0]);
  packed[0].type_index = fx_header_index(map);
  packed[0].v_ptr = map;
  fx_scope_init(&scope, NULL);
  status = fx_encode(args[1], &packed[1], &scope);
  if (status == 0) {
    fx_any_clear(&result);
    /* the runtime holds the Dict too; taken here first, so that waiting releases the GIL */
    status = mutable_ ? fx_hold(map) : 0;
    if (status == 0) {
      status = fx_call_runtime(func, packed, 2, &result);
      if (mutable_) fx_release(map);
    }
  }
  if (fx_scope_close(&scope) < 0 || status < 0) {
    if (status == 0) fx_any_clear(&result); /* (never owned anything: lookups copy) */
    return NULL;
  }
  if (result.type_index >= kTVMFFIStaticObjectBegin && result.v_ptr == marker) {
    fx_decref(result.v_ptr);
    Py_INCREF(args[2]);
    return args[2];
  }
  return fx_decode_owned_api(&result, ((FxObject*)args[0])->exchange_api, 0);
}

static PyObject* seq_size(PyObject* self, PyObject* arg) {
  void* handle;
  (void)self;
  if (fx_address_arg(arg, &handle) < 0) return NULL;
  if (handle == NULL) {
    PyErr_SetString(PyExc_ValueError, "seq_size: the handle is NULL");
    return NULL;
  }
  return PyLong_FromLongLong(FX_CELL(handle, TVMFFISeqCell)->size);
}

static PyObject* seq_item(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  void* handle;
  TVMFFIAny element;
  Py_ssize_t index;
  (void)self;
  if (check_nargs("seq_item", nargs, 2, 2) < 0 ||
      (handle = container_handle("seq_item", args[0])) == NULL) {
    return NULL;
  }
  index = PyLong_AsSsize_t(args[1]);
  if (index == -1 && PyErr_Occurred()) return NULL;
  /* copied under a List's lock: another thread may pop the element right after */
  if (fx_copy_list_element(handle, index, &element) < 0) return NULL;
  return fx_decode_owned_api(&element, ((FxObject*)args[0])->exchange_api, 0);
}

static PyObject* dltensor(PyObject* self, PyObject* arg) {
  void* address;
  (void)self;
  if (fx_address_arg(arg, &address) < 0) return NULL;
  if (address == NULL) {
    PyErr_SetString(PyExc_ValueError, "an empty Tensor holds no DLTensor");
    return NULL;
  }
  return fx_dltensor_fields((const DLTensor*)address);
}

static PyObject* import_capsule(PyObject* self, PyObject* args) {
  PyObject* capsule;
  int alignment, contiguous;
  void* handle;
  (void)self;
  if (!PyArg_ParseTuple(args, "Oip:import_capsule", &capsule, &alignment, &contiguous)) {
    return NULL;
  }
  handle = fx_import_capsule(capsule, alignment, contiguous);
  return handle == NULL ? NULL : PyLong_FromVoidPtr(handle);
}

static PyObject* export_capsule(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  void* handle;
  int versioned;
  (void)self;
  if (check_nargs("export_capsule", nargs, 2, 2) < 0 || fx_address_arg(args[0], &handle) < 0) {
    return NULL;
  }
  if (handle == NULL) {
    PyErr_SetString(PyExc_ValueError, "export_capsule: the handle is NULL");
    return NULL;
  }
  versioned = PyObject_IsTrue(args[1]);
  if (versioned < 0) return NULL;
  return fx_export_capsule(handle, versioned);
}

static PyObject* dtype_from_string(PyObject* self, PyObject* text) {
  DLDataType dtype;
  (void)self;
  if (fx_dtype_from_text(text, &dtype) < 0) return NULL;
  return Py_BuildValue("(iii)", (int)dtype.code, (int)dtype.bits, (int)dtype.lanes);
}

static PyObject* dtype_to_string(PyObject* self, PyObject* args) {
  int code, bits, lanes;
  DLDataType dtype;
  (void)self;
  if (!PyArg_ParseTuple(args, "iii:dtype_to_string", &code, &bits, &lanes)) return NULL;
  dtype.code = (uint8_t)code;
  dtype.bits = (uint8_t)bits;
  dtype.lanes = (uint16_t)lanes;
  return fx_dtype_to_text(dtype);
}

static PyObject* import_managed_tensor(PyObject* self, PyObject* args) {
  PyObject* managed_obj;
  void* managed;
  int versioned, alignment, contiguous;
  void* handle;
  (void)self;
  if (!PyArg_ParseTuple(args, "Opip:import_managed_tensor", &managed_obj, &versioned, &alignment,
                        &contiguous) ||
      fx_address_arg(managed_obj, &managed) < 0) {
    return NULL;
  }
  handle = fx_import_managed(managed, versioned, alignment, contiguous);
  return handle == NULL ? NULL : PyLong_FromVoidPtr(handle);
}

static PyObject* store_str_or_bytes(PyObject* self, PyObject* args) {
  PyObject* address_obj;
  void* address;
  const char* data;
  Py_ssize_t size;
  int is_str;
  TVMFFIAny* out;
  (void)self;
  if (!PyArg_ParseTuple(args, "Oy#p:store_str_or_bytes", &address_obj, &data, &size, &is_str) ||
      fx_address_arg(address_obj, &address) < 0) {
    return NULL;
  }
  out = (TVMFFIAny*)address;
  if (fx_make_str_or_bytes(data, size, is_str, out) < 0) return NULL;
  return handle_or_none(out->type_index >= kTVMFFIStaticObjectBegin ? out->v_ptr : NULL);
}

static PyObject* set_device_class(PyObject* self, PyObject* cls) {
  (void)self;
  if (!PyType_Check(cls)) {
    PyErr_Format(PyExc_TypeError, "set_device_class: cls must be a class, got %s",
                 fx_type_name(Py_TYPE(cls)));
    return NULL;
  }
  fx_set_hook(FX_HOOK_DEVICE, cls);
  Py_RETURN_NONE;
}

#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL

PyMethodDef fx_module_methods[] = {
    {"register_class", register_class, METH_VARARGS,
     "register_class(type_index, cls, mode): cls wraps objects of type_index, made as mode says."},
    {"wrap_owned", FASTCALL(wrap_owned),
     "wrap_owned(handle, type_index=None): the Python value taking over an owned reference."},
    {"type_index_of", type_index_of, METH_O, "The type index in an object's header."},
    {"set_object_metaclass", fx_py_set_object_metaclass, METH_O,
     "set_object_metaclass(meta): Object, Function and TensorBase take the metaclass meta "
     "(before any Python subclass of them is made)."},
    {"watch_crossings", fx_py_watch_crossings, METH_VARARGS,
     "watch_crossings(threads, settle): after a call returns, settle() runs while the set "
     "threads is not empty (error_crossing.py)."},
    {"incref", incref, METH_O, "Adds a strong reference to the object at handle."},
    {"decref", decref, METH_O, "Drops a strong reference to the object at handle."},
    {"set_arg", FASTCALL(set_arg),
     "set_arg(address, value, scope): writes value as a borrowed argument at address."},
    {"pack_into", FASTCALL(pack_into),
     "pack_into(address, values, scope): set_arg for each value, into consecutive slots."},
    {"to_python_at", FASTCALL(to_python_at),
     "The Python value of the owned TVMFFIAny at address (takes its reference)."},
    {"borrowed_to_python_at", FASTCALL(borrowed_to_python_at),
     "The Python value of the borrowed TVMFFIAny at address."},
    {"to_owned_any_at", FASTCALL(to_owned_any_at),
     "to_owned_any_at(value, address): writes value as an owned value at address."},
    {"wrap_callable", FASTCALL(wrap_callable_with),
     "wrap_callable(func, exchange_api=0)\n--\n\nA new Function object that calls func, even if "
     "func is a Function; with exchange_api (a DLPack exchange table's address), its Tensor "
     "arguments reach func as that framework's tensors."},
    {"convert_to_function", convert_to_function, METH_O,
     "convert_to_function(func)\n--\n\nA Function object that calls the Python callable func."},
    {"get_global_func", (PyCFunction)(void (*)(void))fx_py_get_global_func,
     METH_FASTCALL | METH_KEYWORDS,
     "get_global_func(name, allow_missing=False)\n--\n\nThe global function `name`; raises "
     "ValueError when absent unless allow_missing."},
    {"raise_last_error", raise_last_error, METH_NOARGS,
     "Raises the Python exception for this thread's raised error."},
    {"take_last_error", take_last_error, METH_NOARGS,
     "Moves this thread's raised error out of the runtime (an Error, or None)."},
    {"finish_call", FASTCALL(finish_call),
     "finish_call(status, address, exchange_api=0): the value of a completed call, or its "
     "exception."},
    {"new_array_handle", FASTCALL(new_array_handle),
     "new_array_handle(values, context=None): an owned Array handle holding the values "
     "(converted as call arguments)."},
    {"new_map_handle", (PyCFunction)(void (*)(void))new_map_handle, METH_FASTCALL | METH_KEYWORDS,
     "new_map_handle(items, mutable): an owned Map (or Dict) handle holding the pairs."},
    {"map_lookup", (PyCFunction)(void (*)(void))map_lookup, METH_FASTCALL | METH_KEYWORDS,
     "map_lookup(container, key, missing, mutable): the value for key, or missing."},
    {"seq_size", seq_size, METH_O, "The number of elements of the Array or List at handle."},
    {"seq_item", FASTCALL(seq_item),
     "seq_item(container, index): element index of the Array or List container."},
    {"new_shape", FASTCALL(fx_py_new_shape),
     "new_shape(cls, content): a Shape (a tuple of cls) of the integers content holds, with the "
     "Shape object made for it."},
    {"from_dlpack", (PyCFunction)(void (*)(void))fx_py_from_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "from_dlpack(ext_tensor, *, require_alignment=0, require_contiguous=False)\n--\n\n"
     "A Tensor sharing the memory of a framework tensor, any DLPack producer, or a DLPack "
     "capsule. require_alignment (bytes) and require_contiguous make the import fail when the "
     "memory does not comply."},
    {"dltensor", dltensor, METH_O,
     "dltensor(address): the fields of the DLTensor at address (a DLTensorFields)."},
    {"import_capsule", import_capsule, METH_VARARGS,
     "import_capsule(capsule, require_alignment, require_contiguous): a Tensor handle taking "
     "over the capsule's managed tensor."},
    {"export_capsule", FASTCALL(export_capsule),
     "export_capsule(handle, versioned): a DLPack capsule of the Tensor at handle."},
    {"dtype_from_string", dtype_from_string, METH_O,
     "dtype_from_string(text): (code, bits, lanes) of a dtype string."},
    {"dtype_to_string", dtype_to_string, METH_VARARGS,
     "dtype_to_string(code, bits, lanes): the runtime's spelling of a DLDataType."},
    {"import_managed_tensor", import_managed_tensor, METH_VARARGS,
     "import_managed_tensor(managed, versioned, require_alignment, require_contiguous)."},
    {"set_device_class", set_device_class, METH_O,
     "set_device_class(cls): the class (Device or a subclass) devices are returned as."},
    {"store_str_or_bytes", store_str_or_bytes, METH_VARARGS,
     "store_str_or_bytes(address, data, is_str): the handle made (to release later), or None."},
    {NULL, NULL, 0, NULL}};
