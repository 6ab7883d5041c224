# Plain setuptools (no pyproject.toml): pip then builds with the setuptools already installed
# (Debian python3-setuptools) instead of fetching one into an isolated build environment, so
# `pip install ./python` works without a package index.
from setuptools import setup
setup(name="ftax", version="0.1.0", packages=["ftax"], install_requires=["numpy"], python_requires=">=3.8",
      description="ONNX Runtime-style sessions over ftaxc's ahead-of-time compiled models (ctypes, numpy)")
