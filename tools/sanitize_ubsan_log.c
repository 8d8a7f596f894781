/*
 * sanitize_ubsan_log.c -- preloaded by tools/sanitize.sh after libasan and libubsan, so that
 * UndefinedBehaviorSanitizer's reports reach the run's log directory.
 *
 * GCC builds -fsanitize=address,undefined against two runtimes, libasan and libubsan, each with
 * its own report file. libubsan never opens the log_path of UBSAN_OPTIONS: it hands the path to
 * __sanitizer_set_report_path, and that call binds to libasan's copy of the function (first in
 * the process's symbol lookup), so its own reports go to stderr, where a test that captures a
 * child's output swallows them. This constructor calls libubsan's own copy (dlsym on its handle)
 * with $SANITIZE_UBSAN_LOG, in every process that inherits the job's environment.
 *
 * Not instrumented (it is job plumbing, not project code).
 */
#include <dlfcn.h>
#include <stdlib.h>

__attribute__((constructor)) static void route_ubsan_reports(void) {
  const char* path = getenv("SANITIZE_UBSAN_LOG");
  void* ubsan;
  void (*set_report_path)(const char*);
  if (path == NULL || *path == '\0') return;
  ubsan = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (ubsan == NULL) return;
  set_report_path = (void (*)(const char*))dlsym(ubsan, "__sanitizer_set_report_path");
  if (set_report_path != NULL) set_report_path(path);
  dlclose(ubsan);
}
