"""The build contexts of the sandbox's images (one folder each; `common/` is shared by all), shipped in the wheel as
the package data of `sandbox.image_contexts`. Not Python: this file only makes the folder a package."""
