"""The fast front end against the reference front end, snippet by snippet, over one runtime.

The corpus holds both front ends to upstream where upstream's behaviour is a
fact worth pinning; these snippets cover what is the front end's own doing
and easy to get subtly wrong in C: every Python value kind going in and
coming back (as arguments, as callback arguments and as callback results),
moved references, the errors each step raises and their messages, the wrapper
classes and their attributes, identity, equality and hashing, empty handles,
keyword arguments, recursion, and lookups. Each snippet runs under the fast
front end and under the reference one *over the same runtime* (and the other
way round), and the normalized results must be equal.
"""

from __future__ import annotations

import pytest

from frontend_harness import build_corpus_kernels, run_frontend

SETUP = r'''
import ctypes, enum, fractions, gc, sys, weakref

class IntKind(enum.IntEnum):
    A = 1

class Proto:
    def __tvm_ffi_value__(self): return {"x": [1, "long string in a protocol"]}

class BadInt:
    def __tvm_ffi_int__(self): return "no"

class BadDLPack:
    def __dlpack__(self, **kw): raise BufferError("no export today")

class StrSub(str):
    def encode(self, *args): return b"overridden encoding"

def kinds_seen(*args):
    return [type(a).__name__ for a in args]

def probe(value):
    """(class, value) of what a callback receives, through C++."""
    seen = callbacks.call1(lambda x: (type(x).__name__, x), value)
    return [str(seen[0]), seen[1]]
'''

CASES = [
    # values in and back, every kind
    ("echo.scalars", "[values.echo(v) for v in (None, True, 0, -1, 2**63 - 1, -2**63, 1.5, -0.0, 'abc', b'ab')]"),
    ("echo.big", "[values.echo(v) for v in (2**63, -2**63 - 1, 2**64, -(2**127), 3**90, np.uint64(2**64 - 1))]"),
    ("echo.types", "[type(values.echo(v)).__name__ for v in ('x' * 9, b'y' * 9, 'short', b's', [1], {'a': 1}, (1,), api.Shape((1,)))]"),
    ("echo.protocols", "[values.echo(v) for v in (Proto(), IntKind.A, fractions.Fraction(1, 4), np.float32(0.5), bytearray(b'xyzxyzxyz'))]"),
    ("echo.str_subclass", "values.echo(StrSub('a str subclass'))"),
    ("echo.ctypes", "[values.echo(ctypes.c_void_p(v)).value for v in (None, 8, 2**40)]"),
    ("echo.dtype_device", "[values.echo(v) for v in (api.dtype('float16'), np.dtype('uint8'), api.device('cuda', 3), api.device('cpu'))]"),
    ("echo.tensor", "t = values.echo(np.arange(6.0).reshape(2, 3))\nresult = (type(t).__name__, t.shape, t.strides, str(t.dtype), np.from_dlpack(t).sum())"),
    ("echo.exception", "e = values.echo(ValueError('as a value'))\nresult = (type(e).__name__, e.kind, e.message, isinstance(e, api.Object))"),
    ("echo.opaque", "o = object()\nresult = (values.echo(o) is o, values.echo(np.True_) is np.True_)"),
    ("echo.function", "f = values.echo(lambda a, b: a * b)\nresult = (type(f).__name__, f(6, 7), f('ab', 2))"),
    ("echo.nested", "values.echo([[1, [2, [3, {'k': (4, 'a long string value')}]]]])"),
    ("echo.many_args", "callbacks.call_packed(kinds_seen, list(range(20)))" ),
    # callback arguments and results
    ("callback.kinds", "callbacks.call_with_each_kind(kinds_seen)"),
    ("callback.probe", "[probe(v) for v in (1, 'long string for probing', b'bytes bytes', [1, 2], {'a': 1}, None, 2.5, 2**65)]"),
    ("callback.returns", "[callbacks.call1(lambda x, r=r: r, 0) for r in (None, [1, 'x'], {'k': 'v'}, 'a long string result', b'long bytes result', 2**70, api.Shape((3,)))]"),
    ("callback.returns_function", "g = callbacks.call1(lambda x: (lambda y: y + x), 5)\nresult = g(1)"),
    ("callback.returns_moved", "a = api.convert([1])\nresult = first_error_class(lambda: callbacks.call1(lambda x: a._move(), 0))"),
    ("callback.raises_keeps_error", "e = ValueError('kept')\ndef f(x): raise e\ntry:\n    callbacks.call1(f, 0)\nexcept ValueError as caught:\n    result = (caught is e, str(caught), type(caught.__tvm_ffi_error__).__name__)"),
    ("callback.error_kinds", "[first_error_class(lambda c=c: callbacks.call1(raiser(c, 'm'), 0)) for c in (TypeError, KeyError, CorpusError, StopIteration, SystemExit, GeneratorExit)]"),
    ("callback.bad_result", "first_error_class(lambda: callbacks.call1(lambda x: BadInt(), 0))"),
    ("callback.nested", "callbacks.call1(lambda x: callbacks.call1(lambda y: callbacks.call1(lambda z: z * 2, y + 1), x + 1), 1)"),
    # moved references
    ("move.taken", "a = api.convert([1, 2])\nb = containers.array_size(a._move())\nresult = (b, a._handle is None)"),
    ("move.echo", "a = api.convert([1, 2])\nb = values.echo(a._move())\nresult = (list(b), a._handle is None)"),
    ("move.empty_passed", "a = api.convert([1])\nvalues.echo(a._move())\nresult = first_error_class(lambda: values.echo(a))"),
    # conversion errors
    ("error.surrogate", "first_error_class(lambda: values.echo('\\udc80'))"),
    ("error.bad_int_protocol", "values.echo(BadInt())"),
    ("error.bad_dlpack", "values.echo(BadDLPack())"),
    # (the reference meets the recursion limit inside a ctypes call, which reports it as
    # ctypes.ArgumentError; the fast core raises the RecursionError itself)
    ("error.recursion", "x = []\nx.append(x)\nresult = first_error_class(lambda: values.echo(x)) in ('RecursionError', 'ArgumentError')"),
    ("error.keyword", "values.echo(value=1)"),
    ("error.bad_dict_pair", "first_error_class(lambda: api.Map([(1, 2, 3)]))"),
    ("error.map_missing_key", "api.Map({'a': 1})['zz']"),
    ("error.dict_missing_key", "first_error_class(lambda: api.Dict({'a': 1})['zz'])"),
    ("error.status_after_error", "try:\n    values.int_to_text('x')\nexcept TypeError:\n    pass\nresult = values.int_to_text(5)"),
    # wrappers
    ("object.empty", "o = api.Object()\nresult = (repr(o), o._handle, o.__chandle__(), o.id_, o == api.Object(), o.same_as(o))"),
    ("object.empty_function", "first_error_class(lambda: api.Function()())"),
    ("object.identity", "a = api.convert(lambda: 1)\nb = values.echo(a)\nresult = (a == b, a is b, a.same_as(b), a != b, hash(a) == hash(b), a.__chandle__() == b.__chandle__())"),
    ("object.weakref", "a = api.convert(lambda: 1)\nr = weakref.ref(a)\nalive = r() is a\ndel a\ngc.collect()\nresult = (alive, r() is None)"),
    ("object.attributes", "a = api.convert([1])\nresult = (a.type_key, a.type_index, type(a).__mro__[1].__name__, first_error_class(lambda: setattr(api.Object(), 'x', 1)))"),
    ("object.init_by_constructor", "p = Point(1, 2.0, 'c', [])\nq = Point.__new__(Point)\nq.__init_handle_by_constructor__(api.get_global_func('corpus.cpp_make_point'), 3, 4.0, 'd', [])\nresult = (p.x, q.x, q.label)"),
    ("object.unregistered_class", "c = objects.make_circle('c', 1.0)\nresult = (type(c).__name__, type(c).__qualname__, c.name, type(c).__mro__[1].__name__)"),
    ("module.attribute_cached", "f = values.echo\nresult = (values.echo is f, 'echo' in vars(values), values.get_function('echo') is f, first_error_class(lambda: values.nope), 'nope' in vars(values))"),
    ("object.adopt", "a = api.convert([5])\nh = a._handle\nintrospect.arg_strong_count(a)\nb = api.Array._adopt(h)\na._handle = None\nresult = (list(b), type(b).__name__)"),
    ("function.globals", "(api.get_global_func('corpus.py_mul')(3, 4), api.get_global_func(name='corpus.nope', allow_missing=True), first_error_class(lambda: api.get_global_func(1)), first_error_class(lambda: api.get_global_func('corpus.nope')))"),
    ("function.convert", "(type(api.convert(print)).__name__, api.convert(api.convert(len))(['a', 'b']), first_error_class(lambda: api.register_global_func('corpus.not_callable', 5)))"),
    ("function.register_and_remove", "api.register_global_func('corpus.tmp', lambda: 'tmp')\nnames = api.list_global_func_names()\nresult = ('corpus.tmp' in names, api.remove_global_func('corpus.tmp'), api.remove_global_func('corpus.tmp'), api.get_global_func('corpus.tmp', allow_missing=True))"),
    # containers through the core
    ("containers.roundtrip", "a = api.Array([1, 'two', [3.0], {'k': None}])\nm = api.Map({'x': a, 'y': 2**70, 9: b'nine bytes'})\nresult = (list(a)[:2], m['x'].same_as(a), m['y'], m.get(9), m.get('missing', 'dflt'), 'x' in m, len(m))"),
    ("containers.dict_ops", "d = api.Dict()\nd['a long key, longer than 7'] = [1]\nd[1] = 'one'\nv = d.pop(1)\nresult = (v, list(d.keys()), d.get(1), first_error_class(lambda: d.pop(1)))"),
    ("containers.list_ops", "l = api.List([1])\nl.append('x' * 10)\nl[0] = 2**66\nl.insert(0, None)\nresult = (list(l), l.pop(), len(l))"),
    ("containers.shape", "s = api.Shape([2, 3])\nresult = (s, type(s).__name__, containers.shape_echo(s) == s, first_error_class(lambda: api.Shape(['a'])))"),
    ("containers.string_cached", "s = values.str_of_len(20)\nresult = (type(s).__name__, values.echo(s) == s, introspect.arg_strong_count(s), s + '!', str(s) == s)"),
    ("containers.from_dlpack", "t = api.from_dlpack(np.arange(4, dtype='int32'), require_alignment=4)\nresult = (t.shape, tensors.tensor_values(t), first_error_class(lambda: api.from_dlpack(np.arange(4, dtype='int8')[1:], require_alignment=64)))"),
    ("tensor.properties", "x = np.arange(24, dtype='float32').reshape(2, 3, 4)[:, 1:, ::2]\nt = api.from_dlpack(x)\nresult = (t.shape, t.strides, t.ndim, t.numel(), t.size(-1), t.is_contiguous(), t.data_ptr() == x.ctypes.data, str(t.dtype), str(t.device), t.__dlpack_device__(), first_error_class(lambda: t.size(3)))"),
    ("tensor.export", "t = api.from_dlpack(np.arange(5.0))\nv = np.from_dlpack(t)\nc1 = t.__dlpack__()\nc2 = t.__dlpack__(max_version=(1, 0))\nresult = (v.tolist(), type(c1).__name__, api.from_dlpack(c1).shape, api.from_dlpack(c2).shape, first_error_class(lambda: api.from_dlpack(c1)), first_error_class(lambda: t.__dlpack__(max_version=(2, 0), copy=True)))"),
    ("tensor.unused_capsules", "t = api.from_dlpack(np.arange(3.0))\nfor _ in range(100):\n    t.__dlpack__()\n    t.__dlpack__(max_version=(1, 0))\nresult = introspect.arg_strong_count(t)"),
    ("tensor.zero_dim_and_view", "t = api.from_dlpack(np.array(7.5))\nv = tensors.transpose_view(api.from_dlpack(np.arange(6.0).reshape(2, 3)))\nresult = (t.shape, t.strides, t.is_contiguous(), v.shape, v.strides, v.is_contiguous())"),
    ("dtype.properties", "d = api.dtype('float16x4')\nresult = (d.type_code, d.bits, d.lanes, d.itemsize, d.with_lanes(2), api.dtype('int8').is_integer, api.dtype.is_dtype('bfloat16'), api.dtype.is_dtype('nope'), first_error_class(lambda: api.dtype('float77x')), api.dtype(np.dtype('int16')))"),
    ("refcounts.after_errors", "a = api.convert([1, 2])\nfor _ in range(50):\n    try:\n        values.int_to_text(a)\n    except TypeError:\n        pass\n    try:\n        callbacks.call1(raiser(ValueError, 'x'), a)\n    except ValueError:\n        pass\nresult = introspect.arg_strong_count(a)"),
]

PAIRS = [("fast", "ref-over-fast"), ("fast-over-ref", "ref")]
KERNELS = ["introspect", "values", "containers", "callbacks", "objects", "tensors"]


@pytest.fixture(scope="module")
def results(kernels):
    from corpus_cases import SETUP as CORPUS_SETUP

    libs = build_corpus_kernels(kernels, KERNELS)
    frontends = sorted({f for pair in PAIRS for f in pair})
    return {f: run_frontend(f, CASES, setup=CORPUS_SETUP + SETUP, libs=libs,
                            introspect="introspect") for f in frontends}


@pytest.mark.parametrize("ours,theirs", PAIRS)
@pytest.mark.parametrize("case_id", [case_id for case_id, _ in CASES])
def test_fast_matches_ref(results, ours, theirs, case_id):
    assert results[ours][case_id] == results[theirs][case_id]


def test_the_snippets_ran(results):
    """No snippet is broken in a way both front ends share (a harness error, a crash)."""
    broken = {case_id: result for case_id, result in results["ref"].items()
              if result[0] in ("harness-error", "crash", "setup-error", "normalize-error")}
    assert not broken
