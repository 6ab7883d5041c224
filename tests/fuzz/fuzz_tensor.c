/* Fuzz target: one serialized TensorProto through both of ftax's readers, the generated
 * programs' own decoder (templates/c/tensorio.h: ft_pb_decode_tensor) and the loader's
 * (protobuf-c's onnx__tensor_proto__unpack + ft_tensor_from_proto). Either may refuse the
 * bytes; when both accept them they must agree on dtype, shape and every byte of data. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "onnx.pb-c.h"
#include "tensorio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void disagree(const char *what) {
  fprintf(stderr, "fuzz_tensor: the two readers disagree on %s\n", what);
  __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ft_max_tensor_bytes = (size_t)1 << 20;
  ft_pb_tensor a;
  const char *why = NULL;
  int ra = ft_pb_decode_tensor(data, size, &a, &why);
  if (ra && !why) disagree("whether a refusal has a reason");

  ft_tensor b;
  memset(&b, 0, sizeof b);
  ft_err e = {0};
  int rb = -1;
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, data);
  if (tp) {
    rb = ft_tensor_from_proto(tp, NULL, &b, &e);
    if (rb && !e.msg[0]) disagree("whether a refusal has a message");
    onnx__tensor_proto__free_unpacked(tp, NULL);
  }

  if (!ra && !rb) {
    if (a.t.dtype != b.dtype) disagree("the dtype");
    if (a.t.rank != b.rank) disagree("the rank");
    for (int i = 0; i < b.rank; i++)
      if (a.t.dims[i] != b.dims[i]) disagree("a dimension");
    size_t n = ft_dtype_size(b.dtype);
    for (int i = 0; i < b.rank; i++) n *= (size_t)b.dims[i]; /* the loader checked this size */
    if (n && memcmp(a.t.data, b.data, n)) disagree("the data");
  }
  if (!ra) free(a.t.data);
  if (!rb) ft_tensor_free_data(&b);
  return 0;
}
