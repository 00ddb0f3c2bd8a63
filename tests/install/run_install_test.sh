#!/bin/sh
# Installs a dtr build into a temporary prefix, builds and runs the outside
# project tests/install/consumer against it with find_package(dtr), and
# runs the installed `dtr` command. Everything temporary is removed.
#
#   run_install_test.sh CMAKE BUILD_DIR CONSUMER_DIR EXPECT_TORCH(ON|OFF)
set -eu
cmake=$1 build_dir=$2 consumer_dir=$3 expect_torch=$4

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dtr-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix

echo "== cmake --install $build_dir --prefix $prefix"
"$cmake" --install "$build_dir" --prefix "$prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; exit 1; }

# Private headers must stay out of the installed tree.
for h in dtr/torch/checkpoint_context.h dtr/torch/kernel_parts.h \
         dtr/models/tape.h dtr/trace/json_fields_impl.h; do
  if [ -e "$prefix/include/$h" ]; then
    echo "private header installed: $h"; exit 1
  fi
done

echo "== consumer project (find_package(dtr))"
"$cmake" -S "$consumer_dir" -B "$tmp/consumer" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DDTR_EXPECT_TORCH="$expect_torch"
"$cmake" --build "$tmp/consumer" -j2
"$tmp/consumer/core_consumer"
if [ "$expect_torch" = ON ]; then
  "$tmp/consumer/torch_consumer"
fi

echo "== installed dtr command"
# Run from elsewhere with a clean library path: only the install RPATH helps.
cd "$tmp"
env -u LD_LIBRARY_PATH "$prefix/bin/dtr" --help >"$tmp/help.txt"
grep -q 'gen' "$tmp/help.txt" || { echo "dtr --help lists no gen"; exit 1; }
env -u LD_LIBRARY_PATH "$prefix/bin/dtr" gen chain --depth 4 >"$tmp/chain.log"
[ -s "$tmp/chain.log" ] || { echo "dtr gen chain wrote nothing"; exit 1; }
if [ "$expect_torch" = ON ]; then
  # `train` lives in LIBDIR/dtr/dtr_train_command.so, loaded on demand.
  env -u LD_LIBRARY_PATH "$prefix/bin/dtr" train --help >"$tmp/train.txt"
  grep -q -- '--budget-ratio' "$tmp/train.txt" ||
    { echo "installed dtr train did not load its module"; exit 1; }
fi
echo "install test: ok"
