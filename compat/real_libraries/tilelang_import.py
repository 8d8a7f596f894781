"""TileLang imports (and with it its bundled TVM's runtime and compiler libraries)."""
import tilelang

print("tilelang", tilelang.__version__)
