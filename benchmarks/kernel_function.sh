# Sourced by the Nsight Compute session scripts: the CUDA function of a bundled kernel, as ncu's -k regex,
# from the unit and the stencil name (3D CUDA-core stencils run cc_stream3d).
kernel_function() {
  case "$1:$2" in
    cuda_core:*3D*) echo cc_stream3d ;;
    cuda_core:*) echo cc_stream2d ;;
    tensor_core:*) echo tc_stream ;;
    sparse_tensor_core:*) echo sptc_stream ;;
    *) return 1 ;;
  esac
}
