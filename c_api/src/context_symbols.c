/*
 * context_symbols.c -- records the context symbols a runtime registers (see
 * context_symbols.h). The runtime's slot still does the registering; this
 * only keeps a copy of each (name, symbol) it accepted.
 */
#include "context_symbols.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char* name;
  void* symbol;
} ContextSymbol;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static ContextSymbol* g_symbols = NULL;
static size_t g_count = 0, g_capacity = 0;
static int (*g_register)(const char* name, void* symbol) = NULL;

static void remember(const char* name, void* symbol) {
  size_t i;
  pthread_mutex_lock(&g_lock);
  for (i = 0; i < g_count; ++i) {
    if (strcmp(g_symbols[i].name, name) == 0) {
      g_symbols[i].symbol = symbol;
      pthread_mutex_unlock(&g_lock);
      return;
    }
  }
  if (g_count == g_capacity) {
    size_t capacity = g_capacity == 0 ? 8 : g_capacity * 2;
    ContextSymbol* grown = (ContextSymbol*)realloc(g_symbols, capacity * sizeof(ContextSymbol));
    if (grown == NULL) goto done; /* the registration itself stands; only the copy is lost */
    g_symbols = grown;
    g_capacity = capacity;
  }
  g_symbols[g_count].name = strdup(name);
  if (g_symbols[g_count].name != NULL) g_symbols[g_count++].symbol = symbol;
done:
  pthread_mutex_unlock(&g_lock);
}

static int recording_register(const char* name, void* symbol) {
  int status = g_register(name, symbol);
  if (status == 0 && name != NULL) remember(name, symbol);
  return status;
}

void tvm_ffi_context_symbols_wrap(TVMFFIRuntimeTable* table) {
  g_register = table->TVMFFIEnvModRegisterContextSymbol;
  table->TVMFFIEnvModRegisterContextSymbol = recording_register;
}

int tvm_ffi_context_symbols_visit(int (*visit)(void* ctx, const char* name, void* symbol),
                                  void* ctx) {
  ContextSymbol* copy;
  size_t count, i;
  int status = 0;
  /* visit a snapshot, so that visit may itself register symbols */
  pthread_mutex_lock(&g_lock);
  count = g_count;
  copy = (ContextSymbol*)malloc((count == 0 ? 1 : count) * sizeof(ContextSymbol));
  for (i = 0; copy != NULL && i < count; ++i) {
    copy[i].name = strdup(g_symbols[i].name);
    copy[i].symbol = g_symbols[i].symbol;
  }
  pthread_mutex_unlock(&g_lock);
  if (copy == NULL) return -1;
  for (i = 0; i < count; ++i) {
    if (status == 0 && copy[i].name != NULL) status = visit(ctx, copy[i].name, copy[i].symbol);
    free(copy[i].name);
  }
  free(copy);
  return status;
}
