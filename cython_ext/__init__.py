"""Compiled kernels (Cython, C++17): bit vectors and the solvers' inner loops, all GIL-free."""
