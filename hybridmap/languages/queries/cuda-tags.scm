; inherits: cpp
; CUDA tags for hybridmap.
; The CUDA grammar extends tree-sitter-cpp: `__global__` / `__device__` / `__host__` / `__constant__` parse as
; qualifiers, so kernels, device functions and `__constant__` globals are already covered by the C++ patterns.
; Kernel launches `k<<<grid, block>>>(args)` are ordinary `call_expression`s (with a `kernel_call_syntax` child),
; so they are picked up by the inherited call pattern as well.

; `template<...> __global__ void k(...)` launches written as `k<T><<<g, b>>>(...)`.
(call_expression
  function: (template_function name: (identifier) @name.reference.call)
  (kernel_call_syntax))
