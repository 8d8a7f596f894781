/*
 * native_frames.c -- the C and C++ frames of the code that called a failing
 * Python callback, with function names, as backtrace lines.
 *
 * When a kernel calls a Python function and that function raises, the error's
 * backtrace holds the Python frames; a reader also wants the kernel's own
 * frames that made the call (upstream's runtime adds them from libbacktrace).
 * Here the stack is walked with backtrace(3) and each return address is named
 * from the symbol table of the object it lies in: the ELF .symtab when the
 * object is not stripped (it names hidden and static functions too, which
 * kernels are full of), else dladdr's exported symbol; C++ names are
 * demangled. No debug information is read, so a line says which library and
 * function, not which source line:
 *
 *   File "<libkernels.so>", line 0, in mylib::Launch(int, float*)
 *
 * Which frames: every frame is classified by the object it lies in as ours
 * (this library, the Python front ends' extension modules, ctypes and libffi,
 * the bridges between Python and C), the interpreter's, a kernel's (any other
 * object), or unknown (no object: JIT code, libffi trampolines; skipped).
 * Walking outward from the caller, frames of ours are skipped and each of the
 * `python_runs` first stretches of interpreter frames (the Python code of the
 * callback itself, which converts the exception) is passed; the kernel frames
 * met next are the answer, up to the next frame of ours or the interpreter's.
 * If the interpreter's frames come first instead, Python itself called the
 * callback and there is nothing to add.
 *
 * The same walk serves TVMFFIBacktrace (builtins.c), which a kernel calls
 * where it raises: after the raising location the kernel gave, the callers'
 * frames up to the front end that called into the kernel.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <tvm_ffi_runtime.h>

#include "native_frames.h"

#define MAX_FRAMES 128
#define MAX_OBJECTS 64
#define TEXT_CAPACITY 8192
#define NAME_CAPACITY 512

/* The C++ runtime's demangler (libtvm_ffi.so is linked as C++). */
extern char* __cxa_demangle(const char* mangled, char* buffer, size_t* length, int* status);

enum { FRAME_UNKNOWN, FRAME_OURS, FRAME_PYTHON, FRAME_KERNEL };

/* ------------------------------------------------------------ symbol tables */

/* One object's function symbols, read once from its file (mapped; never unmapped). */
typedef struct {
  const void* base;      /* dli_fbase: where the object is loaded */
  int absolute;          /* ET_EXEC: symbol values are addresses, not offsets */
  const Elf64_Sym* syms; /* NULL when the file has no symbol table we can read */
  size_t count;
  const char* strings;
  size_t strings_size;
  const Elf64_Sym** functions; /* the defined functions, by address (binary-searched) */
  size_t function_count;
} SymbolTable;

static SymbolTable tables[MAX_OBJECTS];
static size_t table_count;
static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;

static int by_address(const void* a, const void* b) {
  Elf64_Addr x = (*(const Elf64_Sym* const*)a)->st_value;
  Elf64_Addr y = (*(const Elf64_Sym* const*)b)->st_value;
  return x < y ? -1 : x > y;
}

/* Sorts the table's defined, named functions by address, once: a lookup is then a search. */
static void index_functions(SymbolTable* table) {
  size_t i, n = 0;
  table->functions = (const Elf64_Sym**)malloc(sizeof(Elf64_Sym*) * (table->count + 1));
  if (table->functions == NULL) return;
  for (i = 0; i < table->count; ++i) {
    const Elf64_Sym* sym = &table->syms[i];
    if (ELF64_ST_TYPE(sym->st_info) == STT_FUNC && sym->st_shndx != SHN_UNDEF &&
        sym->st_name != 0 && sym->st_name < table->strings_size) {
      table->functions[n++] = sym;
    }
  }
  qsort(table->functions, n, sizeof(table->functions[0]), by_address);
  table->function_count = n;
}

static void read_symbol_table(SymbolTable* table, const char* path) {
  struct stat st;
  const unsigned char* file;
  const Elf64_Ehdr* header;
  const Elf64_Shdr* sections;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  size_t i;
  int pass;
  if (fd < 0) return;
  if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
    close(fd);
    return;
  }
  file = (const unsigned char*)mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (file == MAP_FAILED) return;
  header = (const Elf64_Ehdr*)file;
  if (memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64 ||
      header->e_shoff == 0 || header->e_shentsize != sizeof(Elf64_Shdr) ||
      header->e_shoff + (size_t)header->e_shnum * sizeof(Elf64_Shdr) > (size_t)st.st_size) {
    munmap((void*)file, (size_t)st.st_size);
    return;
  }
  table->absolute = header->e_type == ET_EXEC;
  sections = (const Elf64_Shdr*)(file + header->e_shoff);
  /* the full table first (hidden and static functions), the dynamic one if stripped */
  for (pass = 0; pass < 2 && table->syms == NULL; ++pass) {
    Elf64_Word wanted = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
    for (i = 0; i < header->e_shnum; ++i) {
      const Elf64_Shdr* strtab;
      if (sections[i].sh_type != wanted || sections[i].sh_link >= header->e_shnum) continue;
      strtab = &sections[sections[i].sh_link];
      if (sections[i].sh_offset + sections[i].sh_size > (size_t)st.st_size ||
          strtab->sh_offset + strtab->sh_size > (size_t)st.st_size || strtab->sh_size == 0 ||
          file[strtab->sh_offset + strtab->sh_size - 1] != '\0') {
        continue;
      }
      table->syms = (const Elf64_Sym*)(file + sections[i].sh_offset);
      table->count = sections[i].sh_size / sizeof(Elf64_Sym);
      table->strings = (const char*)(file + strtab->sh_offset);
      table->strings_size = strtab->sh_size;
      break;
    }
  }
  if (table->syms == NULL) {
    munmap((void*)file, (size_t)st.st_size);
    return;
  }
  index_functions(table);
}

/* The symbol table of the object loaded at `base` (from `path`), read on first use. */
static const SymbolTable* symbol_table(const void* base, const char* path) {
  SymbolTable* found = NULL;
  size_t i;
  pthread_mutex_lock(&tables_lock);
  for (i = 0; i < table_count; ++i) {
    if (tables[i].base == base) found = &tables[i];
  }
  if (found == NULL && table_count < MAX_OBJECTS) {
    found = &tables[table_count++];
    found->base = base;
    read_symbol_table(found, path);
  }
  pthread_mutex_unlock(&tables_lock);
  return found;
}

/* The name of the function holding `pc` in `table`, or NULL: the last function starting at or
 * before it, if it spans it (a symbol of unknown size is taken to). */
static const char* name_in_table(const SymbolTable* table, const void* pc) {
  uintptr_t target = (uintptr_t)pc - (table->absolute ? 0 : (uintptr_t)table->base);
  size_t low = 0, high = table->function_count;
  const Elf64_Sym* sym;
  if (table->functions == NULL || high == 0) return NULL;
  while (high - low > 1) { /* functions[low] starts at or before target, if any does */
    size_t mid = low + (high - low) / 2;
    if (table->functions[mid]->st_value <= target) low = mid; else high = mid;
  }
  sym = table->functions[low];
  if (sym->st_value > target) return NULL;
  if (sym->st_size != 0 && target >= sym->st_value + sym->st_size) return NULL;
  return table->strings + sym->st_name;
}

/* ------------------------------------------------------------ classifying */

static const void* own_base;    /* this library */
static const void* python_base; /* the interpreter (libpython, or the executable) */
static pthread_once_t bases_once = PTHREAD_ONCE_INIT;

static void look_up_bases(void) {
  Dl_info info;
  void* python_symbol = dlsym(RTLD_DEFAULT, "PyObject_Call");
  if (dladdr((void*)&look_up_bases, &info) != 0) own_base = info.dli_fbase;
  if (python_symbol != NULL && dladdr(python_symbol, &info) != 0) python_base = info.dli_fbase;
}

/* The objects that bridge Python and C: the front ends' extension modules, ctypes, libffi. */
static const char* const kBridgePrefixes[] = {"_core.", "_ctypes.", "_cffi_backend.", "libffi.so",
                                              "libffi-"};
/*
 * tvm_ffi_common's _pycapi is counted as the interpreter's: the reference runtime's callbacks
 * enter Python through its entry guard (ctypes calls the guard, the guard calls the function),
 * so the guard and the interpreter's frames on either side of it are one stretch, the
 * callback's entry, not two.
 */
static const char kPythonHelperPrefix[] = "_pycapi.";

static int classify(const Dl_info* info) {
  const char* name;
  size_t i;
  if (info->dli_fname == NULL || info->dli_fbase == NULL) return FRAME_UNKNOWN;
  if (info->dli_fbase == own_base) return FRAME_OURS;
  if (info->dli_fbase == python_base) return FRAME_PYTHON;
  name = strrchr(info->dli_fname, '/');
  name = name != NULL ? name + 1 : info->dli_fname;
  if (strncmp(name, "libpython", 9) == 0 || strncmp(name, "libpypy", 7) == 0 ||
      strncmp(name, kPythonHelperPrefix, sizeof(kPythonHelperPrefix) - 1) == 0) {
    return FRAME_PYTHON;
  }
  for (i = 0; i < sizeof(kBridgePrefixes) / sizeof(kBridgePrefixes[0]); ++i) {
    if (strncmp(name, kBridgePrefixes[i], strlen(kBridgePrefixes[i])) == 0) return FRAME_OURS;
  }
  return FRAME_KERNEL;
}

/* ------------------------------------------------------------ the lines */

static __thread char text[TEXT_CAPACITY];

/* Appends the line of the frame at `pc` (a return address) to out at *used. */
static void append_frame(const void* pc, const Dl_info* info, char* out, size_t capacity,
                         size_t* used) {
  const SymbolTable* table = symbol_table(info->dli_fbase, info->dli_fname);
  const char* mangled = table != NULL ? name_in_table(table, pc) : NULL;
  const char* object = strrchr(info->dli_fname, '/');
  char* demangled = NULL;
  const char* name;
  int status = -1, n;
  if (mangled == NULL) mangled = info->dli_sname;
  if (mangled != NULL && mangled[0] == '_' && mangled[1] == 'Z') {
    demangled = __cxa_demangle(mangled, NULL, NULL, &status);
  }
  name = status == 0 && demangled != NULL ? demangled : mangled != NULL ? mangled : "<unknown>";
  object = object != NULL ? object + 1 : info->dli_fname;
  /* the object in angle brackets: Python's traceback printer then reads no source for it */
  n = snprintf(out + *used, capacity - *used, "  File \"<%s>\", line 0, in %.*s\n", object,
               NAME_CAPACITY, name);
  if (n > 0 && *used + (size_t)n < capacity) *used += (size_t)n;
  free(demangled);
}

size_t tvm_ffi_native_kernel_frames(char* out, size_t capacity, int python_runs,
                                    int skip_kernel_frames) {
  void* frames[MAX_FRAMES];
  int count, i, in_python = 0, kernel_seen = 0;
  size_t used = 0;
  if (capacity == 0) return 0;
  out[0] = '\0';
  pthread_once(&bases_once, look_up_bases);
  count = backtrace(frames, MAX_FRAMES);
  for (i = 1; i < count; ++i) { /* frames[0] is this function */
    /* a return address points after its call: step back into the calling function */
    const void* pc = (const char*)frames[i] - 1;
    Dl_info info;
    int kind = dladdr(pc, &info) != 0 ? classify(&info) : FRAME_UNKNOWN;
    if (kind == FRAME_UNKNOWN) continue;
    if (kind == FRAME_PYTHON) {
      if (kernel_seen) break; /* the kernel's frames end where the interpreter's begin */
      if (!in_python) {
        if (python_runs == 0) break; /* Python itself called */
        --python_runs;
        in_python = 1;
      }
      continue;
    }
    in_python = 0;
    if (kind == FRAME_OURS) {
      if (kernel_seen) break;
      continue;
    }
    kernel_seen = 1;
    if (skip_kernel_frames > 0) {
      --skip_kernel_frames;
      continue;
    }
    append_frame(pc, &info, out, capacity, &used);
  }
  return used;
}

const char* tvm_ffi_runtime_callback_caller_frames(int python_runs) {
  tvm_ffi_native_kernel_frames(text, TEXT_CAPACITY, python_runs, 0);
  return text;
}
