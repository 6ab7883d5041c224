/* ftax-eager's CUDA side (runtime/eager_cuda.cu) built by the host C++ compiler against the CPU
 * emulation of tests/cuda/emu, for ftax-eager-emu: the eager CUDA runtime's dispatch, twin
 * table, caching allocator and host/device placement checked without a GPU. */
#include "eager_cuda.cu"
