__global__ void selective_scan_fwd_kernel() {}
