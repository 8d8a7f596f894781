/*
 * structural_visit.c -- ffi.StructuralWalk, ffi.StructuralVisit, ffi.VisitInterrupt
 * and the visitor's methods; the containers' native __s_visit__ hooks.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/structural_visit.py.
 *
 * A visitor here is an upstream StructuralVisitorObj to C++ (a real vtable at
 * offset 24 whose visit entry is this file's engine), so a C++ __s_visit__
 * hook handed one of ours visits children through it. tvm_ffi_ref/runtime/
 * structural_visit.py states the rules (default descent, walk orders, the
 * callbacks' results).
 */
#include "structural.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "structural_traversal.h"
#include "walk.h"

typedef TVMFFIAny (*FrVisitFn)(void* visitor, TVMFFIAny value);

typedef struct {
  FrVisitFn visit;
} FrVisitorVTable;

typedef struct {
  FrTraversal base;
  void* lists[2]; /* the callback entry Arrays, held: the entries borrow their Functions */
  FrCallbackEntry* callbacks;
  size_t n_callbacks;
  FrCallbackEntry* with_kind;
  size_t n_with_kind;
  int pre_order;
} Visitor;

enum { ADVANCE = 0, SKIP = 1 };

static const TVMFFITypeAttrColumn* g_visit = NULL;
static int32_t g_visitor_index = -1;

static TVMFFIAny none(void) { return fr_any_none(); }

/* Visits value through the visitor's own vtable (ours or a C++ engine's). */
static TVMFFIAny visit(void* visitor, TVMFFIAny value) {
  const FrVisitorVTable* vtable = (const FrVisitorVTable*)((FrTraversal*)visitor)->vtable;
  return vtable->visit(visitor, value);
}

/* A callback's Optional<VisitInterrupt> result checked (an error result otherwise). */
static TVMFFIAny as_interrupt(TVMFFIAny result, const char* expected) {
  if (result.type_index == kTVMFFINone || result.type_index == kTVMFFIVisitInterrupt ||
      result.type_index == kTVMFFIError) {
    return result;
  }
  fr_raise("TypeError", "Cannot convert from type `%s` to `%s`", fr_type_key_of(result.type_index),
           expected);
  fr_any_release(&result);
  return fr_s_raised();
}

static TVMFFIAny visit_fields_in_region(void* visitor, void* obj, int32_t ti) {
  FrTraversal* t = (FrTraversal*)visitor;
  const TVMFFIFieldInfo** fields;
  size_t n, i;
  TVMFFIAny outcome = none();
  if (fr_collect_fields(ti, FR_S_IGNORE, &fields, &n) != 0) return fr_s_raised();
  for (i = 0; i < n && outcome.type_index == kTVMFFINone; ++i) {
    TVMFFIAny child;
    int32_t saved = t->region;
    if (fr_read_field(obj, fields[i], &child) != 0) {
      outcome = fr_s_raised();
      break;
    }
    if (saved != kTVMFFIDefRegionKindPattern && (fields[i]->flags & (FR_S_DEF_SIMPLE | FR_S_DEF_PATTERN))) {
      t->region = (fields[i]->flags & FR_S_DEF_SIMPLE) ? kTVMFFIDefRegionKindSimple
                                                       : kTVMFFIDefRegionKindPattern;
    }
    outcome = visit(visitor, child);
    t->region = saved;
    fr_any_release(&child);
  }
  free(fields);
  return outcome;
}

/* The default descent: the __s_visit__ hook, or the reflected fields. */
static TVMFFIAny default_visit(void* visitor, TVMFFIAny value) {
  FrTraversal* t = (FrTraversal*)visitor;
  TVMFFIAny hook = fr_type_attr_entry(g_visit, value.type_index), args[2], outcome;
  int32_t saved;
  if (hook.type_index == kTVMFFIOpaquePtr) return ((FrVisitFn)hook.v_ptr)(visitor, value);
  if (hook.type_index == kTVMFFIFunction) {
    args[0] = fr_object_view(visitor);
    args[1] = value;
    return as_interrupt(fr_s_call(hook.v_obj, args, 2), "Optional<ffi.VisitInterrupt>");
  }
  if (hook.type_index != kTVMFFINone) {
    fr_raise("TypeError", "__s_visit__ must be an opaque function pointer or ffi.Function");
    return fr_s_raised();
  }
  if (value.type_index < kTVMFFIStaticObjectBegin) return none();
  saved = t->region;
  if (saved == kTVMFFIDefRegionKindSimple &&
      fr_s_kind_or_unsupported(value.type_index) == kTVMFFISEqHashKindFreeVar) {
    t->region = kTVMFFIDefRegionKindNone;
  }
  outcome = visit_fields_in_region(visitor, value.v_obj, value.type_index);
  t->region = saved;
  return outcome;
}

/* ------------------------------------------------------------ the engines */

/* The matching walk callback's result: its control (ADVANCE/SKIP) and an outcome. */
static TVMFFIAny walk_callback(Visitor* v, TVMFFIAny value, int* control) {
  const FrCallbackEntry* entry = fr_s_find_entry(v->callbacks, v->n_callbacks, value.type_index);
  TVMFFIAny args[2], result;
  int32_t n = 1;
  *control = ADVANCE;
  args[0] = value;
  if (entry == NULL) {
    entry = fr_s_find_entry(v->with_kind, v->n_with_kind, value.type_index);
    if (entry == NULL) return none();
    args[1] = fr_any_int(v->base.region);
    n = 2;
  }
  result = fr_s_call(entry->fn, args, n);
  if (result.type_index == kTVMFFIInt || result.type_index == kTVMFFIBool) {
    *control = result.v_int64 == SKIP ? SKIP : ADVANCE;
    return none();
  }
  return as_interrupt(result, "WalkResult");
}

/*
 * The engine: one call visits a value and everything below it over an explicit stack of
 * frames (a frame per container or reflected object whose children it hands out one at a
 * time), so depth costs heap, not C stack. Only hooks that are not this file's own (a C++ or
 * Function __s_visit__, a StructuralVisit callback) call back into a nested engine, as they
 * nest calls upstream; the C-stack check guards those.
 */
enum { FRAME_SEQUENCE, FRAME_MAP, FRAME_FIELDS };

typedef struct {
  void* obj;        /* the value's object (first: fr_s_check_path reads it) */
  TVMFFIAny value;  /* borrowed from the parent (or the caller) */
  int kind;
  int32_t region;   /* the region in force before the value's descent */
  int64_t next;     /* FRAME_SEQUENCE: the next item */
  uint64_t it;      /* FRAME_MAP: the next entry */
  const TVMFFIFieldInfo** fields; /* FRAME_FIELDS (owned) */
  size_t n_fields;
  TVMFFIAny child;      /* FRAME_FIELDS: the field value being visited (owned) */
  int32_t child_region; /* the region before the current field's */
} VisitFrame;

typedef struct {
  VisitFrame* frames;
  size_t n;
  size_t capacity;
} VisitStack;

static TVMFFIAny visit_sequence(void* visitor, TVMFFIAny value);
static TVMFFIAny visit_map_values(void* visitor, TVMFFIAny value);

/* A new frame for value (kind) on top; NULL with an error raised. */
static VisitFrame* push_frame(VisitStack* st, TVMFFIAny value, int kind, int32_t region) {
  VisitFrame* f;
  VisitFrame* grown =
      (VisitFrame*)fr_s_stack_room(st->frames, st->n, &st->capacity, sizeof(VisitFrame));
  if (grown == NULL) return NULL;
  st->frames = grown;
  f = &st->frames[st->n++];
  memset(f, 0, sizeof(*f));
  f->obj = value.v_obj;
  f->value = value;
  f->kind = kind;
  f->region = region;
  f->child = none();
  if (fr_s_check_path("StructuralVisit", st->frames, st->n, sizeof(VisitFrame),
                      offsetof(VisitFrame, obj)) != 0) {
    st->n--;
    return NULL;
  }
  return f;
}

/* Begins value's default descent (default_visit's rules): 1 when a frame now hands out its
 * children, 0 when *outcome already holds the result (a hook ran, a leaf, an error). */
static int begin_descent(Visitor* v, VisitStack* st, TVMFFIAny value, TVMFFIAny* outcome) {
  FrTraversal* t = &v->base;
  TVMFFIAny hook = fr_type_attr_entry(g_visit, value.type_index);
  VisitFrame* f;
  int kind;
  if (hook.type_index == kTVMFFIOpaquePtr && hook.v_ptr != (void*)visit_sequence &&
      hook.v_ptr != (void*)visit_map_values) {
    *outcome = ((FrVisitFn)hook.v_ptr)(v, value);
    return 0;
  }
  if (hook.type_index != kTVMFFIOpaquePtr &&
      (hook.type_index != kTVMFFINone || value.type_index < kTVMFFIStaticObjectBegin)) {
    *outcome = default_visit(v, value); /* a Function hook, a bad hook or a leaf */
    return 0;
  }
  kind = hook.type_index == kTVMFFINone ? FRAME_FIELDS
         : hook.v_ptr == (void*)visit_sequence ? FRAME_SEQUENCE
                                               : FRAME_MAP;
  f = push_frame(st, value, kind, t->region);
  if (f == NULL) {
    *outcome = fr_s_raised();
    return 0;
  }
  if (kind == FRAME_MAP) {
    f->it = fr_map_begin(value.v_obj);
  } else if (kind == FRAME_FIELDS) {
    if (fr_collect_fields(value.type_index, FR_S_IGNORE, &f->fields, &f->n_fields) != 0) {
      st->n--;
      *outcome = fr_s_raised();
      return 0;
    }
    if (t->region == kTVMFFIDefRegionKindSimple &&
        fr_s_kind_or_unsupported(value.type_index) == kTVMFFISEqHashKindFreeVar) {
      t->region = kTVMFFIDefRegionKindNone;
    }
  }
  return 1;
}

/* The top frame's next child into *child: 1, 0 when none is left, -1 on error (raised). A
 * field child is held by the frame and visited in its field's region. */
static int next_child(Visitor* v, VisitFrame* f, TVMFFIAny* child) {
  FrTraversal* t = &v->base;
  if (f->kind == FRAME_SEQUENCE) {
    if (f->next >= fr_seq_size(f->obj)) return 0;
    *child = fr_seq_items(f->obj)[f->next++];
    return 1;
  }
  if (f->kind == FRAME_MAP) {
    if (f->it == fr_map_end(f->obj)) return 0;
    *child = fr_map_entry(f->obj, f->it)->value;
    f->it = fr_map_next(f->obj, f->it);
    return 1;
  }
  if ((size_t)f->next >= f->n_fields) return 0;
  {
    const TVMFFIFieldInfo* field = f->fields[f->next++];
    if (fr_read_field(f->obj, field, &f->child) != 0) {
      f->child = none();
      return -1;
    }
    f->child_region = t->region;
    if (t->region != kTVMFFIDefRegionKindPattern &&
        (field->flags & (FR_S_DEF_SIMPLE | FR_S_DEF_PATTERN))) {
      t->region = (field->flags & FR_S_DEF_SIMPLE) ? kTVMFFIDefRegionKindSimple
                                                   : kTVMFFIDefRegionKindPattern;
    }
    *child = f->child;
    return 1;
  }
}

/* The top frame's child finished: its field value released, the region restored. */
static void child_done(Visitor* v, VisitFrame* f) {
  if (f->kind != FRAME_FIELDS || f->child.type_index == kTVMFFINone) return;
  v->base.region = f->child_region;
  fr_any_release(&f->child);
  f->child = none();
}

/* Enters value: the callback before its descent, or the descent's first frame. Returns 1 when
 * a frame was pushed, 0 when *outcome holds value's result before any post-order callback. */
static int enter(Visitor* v, VisitStack* st, TVMFFIAny value, int walk, TVMFFIAny* outcome,
                 int* control) {
  *control = ADVANCE;
  *outcome = none();
  if (value.type_index == kTVMFFINone) return 0;
  if (walk) {
    if (v->pre_order) *outcome = walk_callback(v, value, control);
    if (outcome->type_index != kTVMFFINone || *control == SKIP) return 0;
  } else {
    const FrCallbackEntry* entry = fr_s_find_entry(v->callbacks, v->n_callbacks, value.type_index);
    if (entry != NULL) {
      TVMFFIAny args[2];
      args[0] = value;
      args[1] = fr_object_view(v);
      *outcome = as_interrupt(fr_s_call(entry->fn, args, 2), "Optional<ffi.VisitInterrupt>");
      *control = SKIP; /* a callback owns the descent: no post-order step */
      return 0;
    }
  }
  return begin_descent(v, st, value, outcome);
}

/* value's descent ended with outcome: the post-order callback, then its error context. */
static TVMFFIAny leave(Visitor* v, TVMFFIAny value, int walk, int control, TVMFFIAny outcome) {
  if (value.type_index == kTVMFFINone) return outcome;
  if (walk && !v->pre_order && control != SKIP && outcome.type_index == kTVMFFINone) {
    outcome = walk_callback(v, value, &control);
  }
  fr_s_record_visit(&outcome, &value);
  return outcome;
}

static TVMFFIAny run_engine(Visitor* v, TVMFFIAny root, int walk) {
  VisitStack st = {NULL, 0, 0};
  TVMFFIAny value = root, outcome;
  int control;
  if (tvm_ffi_runtime_stack_low()) {
    fr_s_too_deep("StructuralVisit");
    outcome = fr_s_raised();
    fr_s_record_visit(&outcome, &root);
    return outcome;
  }
  for (;;) {
    if (enter(v, &st, value, walk, &outcome, &control)) {
      outcome = none();
    } else {
      outcome = leave(v, value, walk, control, outcome);
      if (st.n == 0) break;
      child_done(v, &st.frames[st.n - 1]);
    }
    /* hand out the top frame's next child, or close frames until one has one */
    for (;;) {
      VisitFrame* f = &st.frames[st.n - 1];
      int got = 0;
      if (outcome.type_index == kTVMFFINone) {
        got = next_child(v, f, &value);
        if (got < 0) outcome = fr_s_raised();
      }
      if (got > 0) break;
      v->base.region = f->region;
      free((void*)f->fields);
      value = f->value;
      st.n--;
      outcome = leave(v, value, walk, ADVANCE, outcome);
      if (st.n == 0) break;
      child_done(v, &st.frames[st.n - 1]);
    }
    if (st.n == 0) break;
  }
  free(st.frames);
  return outcome;
}

static TVMFFIAny walk_visit(void* self, TVMFFIAny value) {
  return run_engine((Visitor*)self, value, 1);
}

static TVMFFIAny callback_visit(void* self, TVMFFIAny value) {
  return run_engine((Visitor*)self, value, 0);
}

static const FrVisitorVTable kWalkVTable = {walk_visit};
static const FrVisitorVTable kCallbackVTable = {callback_visit};

static void visitor_deleter(void* self, int flags) {
  Visitor* v = (Visitor*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    free(v->callbacks);
    free(v->with_kind);
    if (v->lists[0] != NULL) fr_decref(v->lists[0]);
    if (v->lists[1] != NULL) fr_decref(v->lists[1]);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

/* A visitor running vtable; NULL + raised on failure. */
static Visitor* visitor_new(const FrVisitorVTable* vtable, void* callbacks, void* with_kind) {
  Visitor* v = (Visitor*)fr_object_alloc(sizeof(Visitor), g_visitor_index, visitor_deleter);
  if (v == NULL) return NULL;
  v->base.vtable = vtable;
  v->lists[0] = callbacks;
  v->lists[1] = with_kind;
  fr_incref(callbacks);
  if (with_kind != NULL) fr_incref(with_kind);
  if (fr_s_entries(callbacks, 2, &v->callbacks, &v->n_callbacks) != 0 ||
      (with_kind != NULL && fr_s_entries(with_kind, 2, &v->with_kind, &v->n_with_kind) != 0)) {
    fr_decref(v);
    return NULL;
  }
  return v;
}

/* ------------------------------------------------------------ container hooks */

static TVMFFIAny visit_items(void* visitor, const TVMFFIAny* items, int64_t n, int64_t stride) {
  int64_t i;
  for (i = 0; i < n; ++i) {
    TVMFFIAny outcome = visit(visitor, items[i * stride]);
    if (outcome.type_index != kTVMFFINone) return outcome;
  }
  return none();
}

static TVMFFIAny visit_sequence(void* visitor, TVMFFIAny value) {
  return visit_items(visitor, fr_seq_items(value.v_obj), fr_seq_size(value.v_obj), 1);
}

static TVMFFIAny visit_map_values(void* visitor, TVMFFIAny value) {
  uint64_t it, end = fr_map_end(value.v_obj);
  for (it = fr_map_begin(value.v_obj); it != end; it = fr_map_next(value.v_obj, it)) {
    TVMFFIAny outcome = visit(visitor, fr_map_entry(value.v_obj, it)->value);
    if (outcome.type_index != kTVMFFINone) return outcome;
  }
  return none();
}

int fr_structural_visit_init(void) {
  static const TVMFFIByteArray kVisitor = {"ffi.StructuralVisitor", 21};
  const int32_t types[4] = {kTVMFFIArray, kTVMFFIList, kTVMFFIMap, kTVMFFIDict};
  int i;
  if (fr_type_key_to_index(&kVisitor, &g_visitor_index) != 0 ||
      fr_register_attr_cstr(kTVMFFINone, "__s_visit__", NULL) != 0) {
    return -1;
  }
  for (i = 0; i < 4; ++i) {
    TVMFFIAny native = fr_any_none();
    native.type_index = kTVMFFIOpaquePtr;
    native.v_ptr = i < 2 ? (void*)visit_sequence : (void*)visit_map_values;
    if (fr_register_attr_cstr(types[i], "__s_visit__", &native) != 0) return -1;
  }
  g_visit = fr_s_column("__s_visit__");
  return 0;
}

/* ------------------------------------------------------------ globals */

static int visit_interrupt(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* interrupt = fr_reflected_new(kTVMFFIVisitInterrupt);
  (void)ctx;
  if (interrupt == NULL) return -1;
  *(TVMFFIAny*)((char*)interrupt + 24) = fr_any_copy(&args[0].value);
  *rv = fr_any_object(interrupt);
  return 0;
}

static int visitor_visit(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return fr_s_finish(visit(args[0].value.v_obj, args[1].value), rv);
}

static int visitor_default_visit(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  TVMFFIAny outcome;
  (void)ctx;
  outcome = default_visit(args[0].value.v_obj, args[1].value);
  fr_s_record_visit(&outcome, &args[1].value);
  return fr_s_finish(outcome, rv);
}

static int visitor_region(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_int(((FrTraversal*)args[0].value.v_obj)->region);
  return 0;
}

static int visitor_with_region(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return fr_s_with_region((FrTraversal*)args[0].value.v_obj, (int32_t)args[1].value.v_int64,
                          args[2].value.v_obj, rv);
}

static int run(Visitor* v, const TVMFFIAny* root, TVMFFIAny* rv) {
  TVMFFIAny outcome;
  if (v == NULL) return -1;
  outcome = visit(v, *root);
  fr_decref(v);
  return fr_s_finish(outcome, rv);
}

static int structural_walk(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  Visitor* v = visitor_new(&kWalkVTable, args[1].value.v_obj, args[2].value.v_obj);
  (void)ctx;
  if (v != NULL) v->pre_order = args[3].value.v_int64 == 0;
  return run(v, &args[0].value, rv);
}

static int structural_visit(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return run(visitor_new(&kCallbackVTable, args[1].value.v_obj, NULL), &args[0].value, rv);
}

int fr_structural_visit_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi.VisitInterrupt", visit_interrupt, NULL, 1, {FR_T_ANY}, FR_T_INTERRUPT},
      {"ffi.StructuralVisitorVisit", visitor_visit, NULL, 2, {FR_T_VISITOR, FR_T_ANYVIEW},
       FR_T_OPT_INTERRUPT},
      {"ffi.StructuralVisitorDefaultVisit", visitor_default_visit, NULL, 2,
       {FR_T_VISITOR, FR_T_ANYVIEW}, FR_T_OPT_INTERRUPT},
      {"ffi.StructuralVisitorDefRegionKind", visitor_region, NULL, 1, {FR_T_VISITOR}, FR_T_INT},
      {"ffi.StructuralVisitorWithDefRegionKind", visitor_with_region, NULL, 3,
       {FR_T_VISITOR, FR_T_INT, FR_T_FUNCTION}, FR_T_ANY},
      {"ffi.StructuralWalk", structural_walk, NULL, 4,
       {FR_T_ANYVIEW, FR_T_CALLBACKS, FR_T_CALLBACKS, FR_T_INT}, FR_T_OPT_INTERRUPT},
      {"ffi.StructuralVisit", structural_visit, NULL, 2, {FR_T_ANYVIEW, FR_T_CALLBACKS},
       FR_T_OPT_INTERRUPT},
  };
  return fr_register_builtins(kBuiltins, sizeof(kBuiltins) / sizeof(kBuiltins[0]));
}
