/* ftax-cuda-probe: is there a CUDA device to run the GPU tests on?
 * Exit 0 with its name on stdout, or 77 (CTest's skip code here) saying why not. */
#include <cuda_runtime.h>
#include <stdio.h>

int main(void) {
  int n = 0;
  cudaError_t r = cudaGetDeviceCount(&n);
  if (r != cudaSuccess || n == 0) {
    printf("no CUDA device (cudaGetDeviceCount: %s)\n", r != cudaSuccess ? cudaGetErrorString(r) : "0 devices");
    return 77;
  }
  struct cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
    printf("CUDA device 0 cannot be queried\n");
    return 77;
  }
  printf("%s sm_%d%d\n", p.name, p.major, p.minor);
  return 0;
}
