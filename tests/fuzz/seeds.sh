#!/bin/sh
# Gather the fuzz targets' seed inputs (nothing derived is committed):
#   seeds.sh SEEDTOOL OUT_DIR [MAX_BYTES]
# writes OUT_DIR/fuzz_model, OUT_DIR/fuzz_tensor, OUT_DIR/fuzz_extpath:
#   fuzz_model    tests/models/*/model.onnx (seq_split and seq_ops carry Loop and Sequence
#                 nodes), tests/data/**/*.onnx, tests/cuda/*.onnx, the ONNX
#                 backend node tests listed below, and each of those node tests again with its
#                 test_data_set_0 inputs folded in as initializers (seedtool fold: ftax then
#                 evaluates every node at compile time)
#   fuzz_tensor   the .pb files of tests/models/*/test_data_set_* and of the node tests below
#                 and tests/fuzz/seeds/fuzz_model (model-local functions and subgraphs in the
#                 shapes the loader's inlining must get right: tests/fuzz/make_model_seeds.py)
#   fuzz_extpath  tests/fuzz/seeds/fuzz_extpath (hand-made locations)
# plus tests/fuzz/regressions/<target>/* (fixed crashes). Files above MAX_BYTES are left out
# (the fuzzer would cut them to its -max_len anyway).
set -eu
seedtool=$1; out=$2; max=${3:-0}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
nodes=${FTAX_NODE_TESTS:-/usr/share/libonnx-testdata/data/node}

# a few dozen small node tests across op families
node_tests="test_add_bcast test_mul_bcast test_pow_bcast_array test_mod_mixed_sign_int32
test_bitshift_left_uint8 test_where_example test_cast_FLOAT_to_FLOAT16 test_erf test_celu
test_clip_default_min test_conv_with_strides_padding test_conv_with_autopad_same
test_convtranspose_pads test_convinteger_with_padding test_maxpool_2d_pads
test_averagepool_2d_strides test_lrn test_instancenorm_example test_batchnorm_epsilon
test_layer_normalization_2d_axis0 test_mvn test_gemm_all_attributes test_matmul_4d
test_einsum_batch_matmul test_qlinearmatmul_2D test_quantizelinear test_dequantizelinear
test_reshape_negative_dim test_slice_neg_steps test_gather_1 test_gathernd_example_int32
test_scatter_elements_with_axis test_concat_3d_axis_1 test_split_equal_parts_1d
test_transpose_all_permutations_0 test_expand_dim_changed test_tile test_constant_pad
test_unsqueeze_axis_0 test_squeeze test_flatten_axis1 test_depthtospace_example
test_spacetodepth_example test_reduce_mean_keepdims_example test_argmax_keepdims_example
test_softmax_axis_1 test_hardmax_axis_1 test_cumsum_1d test_top_k test_resize_upsample_scales_linear
test_range_float_type_positive_delta test_onehot_with_axis test_nonzero_example
test_constantofshape_float_ones test_shape test_size test_lstm_defaults test_gru_defaults
test_dft test_roialign_aligned_true test_gridsample test_reversesequence_batch
test_nonmaxsuppression_center_point_box_format test_sum_example test_max_example
test_compress_0 test_unique_not_sorted_without_axis test_tril test_mean_example test_loop11
test_range_float_type_positive_delta_expanded"

rm -rf "$out/fuzz_model" "$out/fuzz_tensor" "$out/fuzz_extpath"
mkdir -p "$out/fuzz_model" "$out/fuzz_tensor" "$out/fuzz_extpath"

# add FILE TARGET NAME: copy unless above MAX_BYTES
add() {
  if [ "$max" -gt 0 ] && [ "$(wc -c <"$1")" -gt "$max" ]; then return 0; fi
  cp "$1" "$out/$2/$3"
}

for m in "$src"/tests/models/*/model.onnx; do
  d=$(dirname "$m"); name=$(basename "$d")
  add "$m" fuzz_model "model_$name.onnx"
  for pb in "$d"/test_data_set_*/*.pb; do
    [ -e "$pb" ] || continue
    set=$(basename "$(dirname "$pb")")
    add "$pb" fuzz_tensor "model_${name}_${set#test_data_set_}_$(basename "$pb")"
  done
done
for m in $(find "$src/tests/data" "$src/tests/cuda" -name '*.onnx' | LC_ALL=C sort); do
  rel=${m#"$src"/tests/}
  add "$m" fuzz_model "$(printf '%s' "$rel" | tr '/' '_')"
done
if [ -d "$nodes" ]; then
  for t in $node_tests; do
    [ -f "$nodes/$t/model.onnx" ] || continue
    add "$nodes/$t/model.onnx" fuzz_model "node_$t.onnx"
    data=$nodes/$t/test_data_set_0
    set --
    for pb in "$data"/input_*.pb; do [ -e "$pb" ] && set -- "$@" "$pb"; done
    if [ $# -gt 0 ]; then
      "$seedtool" fold "$nodes/$t/model.onnx" "$out/folded.tmp" "$@"
      add "$out/folded.tmp" fuzz_model "node_${t}_folded.onnx"
      rm -f "$out/folded.tmp"
    fi
    for pb in "$data"/*.pb; do [ -e "$pb" ] && add "$pb" fuzz_tensor "node_${t}_$(basename "$pb")"; done
  done
fi
cp "$here"/seeds/fuzz_extpath/* "$out/fuzz_extpath/"
for m in "$here"/seeds/fuzz_model/*.onnx; do add "$m" fuzz_model "seed_$(basename "$m")"; done
for t in fuzz_model fuzz_tensor fuzz_extpath; do
  for f in "$here/regressions/$t"/*; do [ -f "$f" ] && cp "$f" "$out/$t/regression_$(basename "$f")"; done
done
for t in fuzz_model fuzz_tensor fuzz_extpath; do
  echo "seeds: $t: $(find "$out/$t" -type f | wc -l) files"
done
