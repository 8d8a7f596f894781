/*
 * fault_report.c -- tvm-ffi-check's fault reporter, loaded into the worker's child.
 *
 * The checker hands kernels tensors whose data sits against guard pages
 * (tvm_ffi_check/guard.py): an access past either end faults at once. Python
 * cannot run in a SIGSEGV handler, so this handler, in C, writes down what
 * faulted -- the signal, its code, the address and (on x86-64) whether the
 * access was a read or a write -- into a record the worker's supervisor
 * shares with the child (a MAP_SHARED page), then lets the signal kill the
 * process as it would have: SA_RESETHAND restores the default action and the
 * handler raises the signal again. The supervisor reads the record once the
 * child is gone.
 *
 * Built by setup.py into tvm_ffi_common/lib/libtvm_ffi_check_fault.so.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

/* The record: the supervisor reads the same five words (guard.py FAULT_RECORD). */
typedef struct {
  volatile uint64_t written; /* 1 once the fields below hold a fault */
  volatile uint64_t signo;
  volatile uint64_t code;    /* siginfo's si_code (SEGV_ACCERR: a protected page) */
  volatile uint64_t address; /* siginfo's si_addr: what the access touched */
  volatile uint64_t access;  /* 0 unknown, 1 read, 2 write */
} FaultRecord;

static FaultRecord* record;

/* Its own stack, so that a stack overflow in the main thread is reported too. */
#define ALT_STACK_SIZE (64 * 1024)

static void on_fault(int signo, siginfo_t* info, void* context) {
  FaultRecord* out = record;
  /* si_code > 0: the kernel raised it for an access (not raise() or kill()). */
  if (out != NULL && !out->written && info->si_code > 0) {
    out->signo = (uint64_t)signo;
    out->code = (uint64_t)info->si_code;
    out->address = (uint64_t)(uintptr_t)info->si_addr;
    out->access = 0;
#if defined(__x86_64__) && defined(REG_ERR)
    /* The page-fault error code: bit 1 is set for a write. */
    out->access = (((ucontext_t*)context)->uc_mcontext.gregs[REG_ERR] & 2) ? 2 : 1;
#else
    (void)context;
#endif
    __sync_synchronize();
    out->written = 1;
  }
  /* SA_RESETHAND restored the default action: die of the same signal, as without us. */
  raise(signo);
}

/* Installs the handler for SIGSEGV and SIGBUS, writing into `where` (five uint64 words).
 * Returns 0, or -1 when a signal call failed. */
int tvm_ffi_check_install_fault_reporter(void* where) {
  static char* alt_stack = NULL;
  struct sigaction action;
  record = (FaultRecord*)where;
  if (alt_stack == NULL) {
    stack_t stack;
    alt_stack = (char*)malloc(ALT_STACK_SIZE);
    if (alt_stack != NULL) {
      memset(&stack, 0, sizeof(stack));
      stack.ss_sp = alt_stack;
      stack.ss_size = ALT_STACK_SIZE;
      sigaltstack(&stack, NULL);
    }
  }
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSEGV, &action, NULL) != 0) return -1;
  if (sigaction(SIGBUS, &action, NULL) != 0) return -1;
  return 0;
}
