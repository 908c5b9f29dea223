__global__ void selective_scan_bwd_kernel() {}
