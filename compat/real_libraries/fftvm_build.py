"""fftvm's build, as far as it can run here: its setup.py derives its TVM FFI include
directories from ``tvm_ffi`` (``get_tvm_ffi_include_paths``), and its C++ source
(src/libfftvm.cpp) is compiled against them; then the same headers are compiled against
``tvm_ffi.libinfo.include_paths()``, what a build under the drop-in passes instead (see
``compat/run_real_libraries.py``: why the first compile cannot resolve under ours).

fftvm's build also clones FastFlow from GitHub, which cannot be fetched here (only package
registries are reachable), so its source is compiled with the FastFlow include left out and
``-fsyntax-only`` stops at the first use of FastFlow: what is checked is that every TVM FFI
header it includes resolves in the directories its setup.py derived, and which do not.
"""
import ast
import glob
import os
import re
import subprocess
import sys
import tarfile
import tempfile

work = tempfile.mkdtemp()
subprocess.check_call([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                       "--no-build-isolation", "--no-binary",
                       ":all:", "fftvm==0.1.0", "-d", work], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL)
with tarfile.open(glob.glob(os.path.join(work, "fftvm-*.tar.gz"))[0]) as archive:
    archive.extractall(work)
root = glob.glob(os.path.join(work, "fftvm-0.1.0"))[0]

# the setup.py's include-path function, run as its build runs it (setup() itself is not run)
with open(os.path.join(root, "setup.py")) as f:
    tree = ast.parse(f.read())
keep = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)) or
        (isinstance(node, ast.FunctionDef) and node.name == "get_tvm_ffi_include_paths")]
namespace: dict = {}
exec(compile(ast.Module(body=keep, type_ignores=[]), "fftvm/setup.py", "exec"), namespace)
include_dirs = namespace["get_tvm_ffi_include_paths"]()
print("include dirs exist", [os.path.isdir(d) for d in include_dirs])

with open(os.path.join(root, "src", "libfftvm.cpp")) as f:
    source = f.read()
headers = re.findall(r"#include <(tvm/ffi/[^>]+)>", source)
found = {h: any(os.path.isfile(os.path.join(d, h)) for d in include_dirs) for h in headers}
print("tvm headers found", found)
unit = os.path.join(work, "tvm_part.cc")
with open(unit, "w") as f:
    f.write("".join(f"#include <{h}>\n" for h in headers))
done = subprocess.run(["c++", "-std=c++17", "-fsyntax-only", unit] +
                      [f"-I{d}" for d in include_dirs], capture_output=True, text=True)
print("compile", done.returncode, done.stderr.strip().splitlines()[:1])

# what a build under the drop-in passes instead: the include paths tvm_ffi reports
import tvm_ffi.libinfo

done = subprocess.run(["c++", "-std=c++17", "-fsyntax-only", unit] +
                      [f"-I{d}" for d in tvm_ffi.libinfo.include_paths()],
                      capture_output=True, text=True)
print("compile with libinfo.include_paths()", done.returncode,
      done.stderr.strip().splitlines()[:1])
