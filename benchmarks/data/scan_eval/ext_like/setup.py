# Mimics the layout of public selective-scan / causal-conv1d repositories: a CUDA extension built in setup.py,
# imported by the package; Triton kernels defined in ops/triton and launched from modules.
from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="mamba_like",
    packages=find_packages(),
    ext_modules=[
        CUDAExtension(
            name="selective_scan_cuda",
            sources=[
                "csrc/selective_scan/selective_scan.cpp",
                "csrc/selective_scan/selective_scan_fwd.cu",
                "csrc/selective_scan/selective_scan_bwd.cu",
            ],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    install_requires=["torch", "einops"],
)
