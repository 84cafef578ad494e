#!/bin/bash
# The package as it was at COMMIT, importable as `tcadvisor_before` from DIR (default build/before), with its
# kernels, models and hwspecs inside it (tcadvisor/data.py looks in _data/ first): the "before" side of a
# side-by-side timing in one process (benchmarks/time_x_images.py).  The registry imports kernel modules by
# absolute name; the copy's is made relative so that it loads its own.
#     bash benchmarks/make_before_tree.sh 3135c3a build/before
set -euo pipefail
commit=$1
dir=${2:-build/before}
tmp=$(mktemp -d)
rm -rf "$dir"
mkdir -p "$dir/tcadvisor_before/_data"
git archive "$commit" tcadvisor kernels models hwspecs | tar -x -C "$tmp"
cp -r "$tmp/tcadvisor/." "$dir/tcadvisor_before/"
cp -r "$tmp/kernels" "$tmp/models" "$tmp/hwspecs" "$dir/tcadvisor_before/_data/"
sed -i 's/importlib.import_module(f"tcadvisor.gpu.{name}")/importlib.import_module(f".{name}", __package__)/' \
    "$dir/tcadvisor_before/gpu/registry.py"
grep -q '__package__' "$dir/tcadvisor_before/gpu/registry.py"
rm -rf "$tmp"
echo "$dir/tcadvisor_before from $commit"
