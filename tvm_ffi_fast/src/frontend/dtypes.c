/*
 * dtypes.c -- dtype values: DLDataType <-> its spelling, and the dtype class's instances.
 *
 * The runtime parses and prints dtype strings (TVMFFIDataTypeFromString /
 * ToString); the shared dtype.py asks for both through shortcuts, and a
 * DataType result becomes a dtype exactly as dtype.dtype_from_tuple makes one.
 */
#include "frontend.h"

/*
 * The spelling of each DLDataType the runtime printed, remembered: printing is
 * a pure function of the triple, except for custom type codes (from 129),
 * whose names come from the dtype.get_custom_type_name global and may change.
 */
#define FX_DTYPE_CUSTOM_BEGIN 129
static PyObject* dtype_texts;

static PyObject* dtype_text(DLDataType dtype) {
  uint32_t packed = (uint32_t)dtype.code | (uint32_t)dtype.bits << 8 | (uint32_t)dtype.lanes << 16;
  PyObject *key, *text, *printed;
  TVMFFIAny spelled;
  if (dtype_texts == NULL && (dtype_texts = PyDict_New()) == NULL) return NULL;
  key = PyLong_FromUnsignedLong(packed);
  if (key == NULL) return NULL;
  text = PyDict_GetItemWithError(dtype_texts, key);
  if (text != NULL || PyErr_Occurred()) {
    Py_XINCREF(text);
    Py_DECREF(key);
    return text;
  }
  /* dtype.format_triple: str(to_python(TVMFFIDataTypeToString(...))) */
  fx_any_clear(&spelled);
  if (TVMFFIDataTypeToString(&dtype, &spelled) != 0) {
    Py_DECREF(key);
    return fx_raise_last_error();
  }
  printed = fx_decode_owned(&spelled);
  text = printed ? PyObject_Str(printed) : NULL;
  Py_XDECREF(printed);
  if (text != NULL && dtype.code < FX_DTYPE_CUSTOM_BEGIN &&
      PyDict_SetItem(dtype_texts, key, text) < 0) {
    Py_CLEAR(text);
  }
  Py_DECREF(key);
  return text;
}

/* dtype.dtype_from_tuple: str.__new__(dtype, <runtime's spelling>), then its triple. */
PyObject* fx_make_dtype(DLDataType dtype) {
  PyObject *cls = fx_hook(FX_HOOK_DTYPE), *text, *args, *self, *triple;
  if (cls == NULL || (text = dtype_text(dtype)) == NULL) return NULL;
  args = PyTuple_Pack(1, text);
  Py_DECREF(text);
  if (args == NULL) return NULL;
  self = PyUnicode_Type.tp_new((PyTypeObject*)cls, args, NULL);
  Py_DECREF(args);
  if (self == NULL) return NULL;
  /* lanes read as int16, as dtype.lanes_as_int16 does: a scalable vector stores -factor */
  triple = Py_BuildValue("(iii)", (int)dtype.code, (int)dtype.bits, (int)(int16_t)dtype.lanes);
  if (triple == NULL || PyObject_SetAttr(self, fx_names.dtype_tuple, triple) < 0) Py_CLEAR(self);
  Py_XDECREF(triple);
  return self;
}


PyObject* fx_dtype_to_text(DLDataType dtype) { return dtype_text(dtype); }

int fx_dtype_from_text(PyObject* text, DLDataType* out) {
  TVMFFIByteArray array;
  Py_ssize_t size;
  if (!PyUnicode_Check(text)) {
    PyErr_Format(PyExc_TypeError, "a dtype string must be a str, not %s",
                 fx_type_name(Py_TYPE(text)));
    return -1;
  }
  array.data = PyUnicode_AsUTF8AndSize(text, &size);
  if (array.data == NULL) return -1;
  array.size = (size_t)size;
  if (TVMFFIDataTypeFromString(&array, out) != 0) {
    fx_raise_last_error();
    return -1;
  }
  return 0;
}
