"""What tritonlint knows about the PyTorch and Triton APIs.

Names here are fully qualified (after alias resolution), so `F.softmax`,
`fn.softmax` and `from torch.nn.functional import softmax` all arrive as
`torch.nn.functional.softmax`. Rules and the tensor inference share these
tables; config can extend the glue set (`allow-glue`).
"""

from __future__ import annotations

TORCH_ROOTS = ("torch", "torch_npu")

# torch.* functions that move no math: allocation, views and layout, metadata.
GLUE_FUNCTIONS = frozenset(
    "torch." + n
    for n in (
        "empty empty_like empty_strided zeros zeros_like ones ones_like full full_like tensor as_tensor "
        "reshape flatten unflatten squeeze unsqueeze permute transpose t "
        "swapaxes swapdims movedim moveaxis chunk split tensor_split unbind "
        "narrow select as_strided view_as_real view_as_complex "
        "numel is_tensor is_floating_point is_complex finfo iinfo device "
        "dtype Size get_default_dtype no_grad inference_mode enable_grad "
        "set_grad_enabled is_grad_enabled manual_seed"
    ).split()
)

# Methods a class of the submission inherits from torch's base classes (what `Names._inherited` trusts).
_MODULE_METHODS = frozenset(
    "register_buffer register_parameter register_module add_module parameters named_parameters buffers "
    "named_buffers children named_children modules named_modules get_parameter get_buffer get_submodule "
    "state_dict load_state_dict train eval requires_grad_ zero_grad extra_repr to cuda cpu npu float half double".split()
)
INHERITED_METHODS = {
    "torch.nn.Module": _MODULE_METHODS,
    "torch.nn.modules.module.Module": _MODULE_METHODS,
    "torch.autograd.Function": frozenset("apply save_for_backward mark_dirty mark_non_differentiable".split()),
    "torch.autograd.function.Function": frozenset("apply save_for_backward mark_dirty mark_non_differentiable".split()),
}
# NumPy conversions of a tensor: a host copy (TL205's concern), whose result is then an array
NUMPY_CONVERSIONS = frozenset(("numpy.asarray", "numpy.array", "numpy.ascontiguousarray"))

# Functions that return a new buffer.
ALLOCATIONS = frozenset(
    "torch." + n for n in "empty empty_like empty_strided zeros zeros_like ones ones_like full full_like tensor as_tensor".split()
)

# Prefixes of torch namespaces that manage devices/runtime, not data.
GLUE_PREFIXES = (
    "torch.cuda.",
    "torch.npu.",
    "torch.accelerator.",
    "torch.backends.",
    "torch.version.",
    "torch.distributed.",
    "torch.utils.",
    "torch.library.",
    "torch.jit.is_",
    "torch.compiler.is_",
    "torch.nn.Parameter",
    "torch.nn.parameter.",
    "torch.nn.Module",
    "torch.autograd.Function",  # `Fn.apply(x)` runs Fn.forward, which the call graph follows
    "torch.autograd.function.Function",
    "torch.Event",
    "torch.Stream",
    "torch_npu.npu.",
    # TorchInductor's generated host code: guards, raw allocation, streams, launch-grid helpers
    "torch._C._dynamo.guards.",
    "torch._C._cuda_getCurrentRawStream",
    "torch._inductor.runtime.triton_heuristics.",
)
# Glue (by GLUE_PREFIXES) whose result is a tensor: Inductor's raw allocation and reinterpretation.
TENSOR_GLUE_PREFIXES = ("torch._C._dynamo.guards._empty_strided", "torch._C._dynamo.guards._reinterpret_tensor")
# Functions callable inside a Triton kernel that are kernel maths, like `tl.*`
# (TorchInductor's helpers over triton.language).
KERNEL_MATH_PREFIXES = ("triton.", "torch._inductor.runtime.triton_helpers.")

DTYPE_NAMES = frozenset(
    (
        "float float16 float32 float64 bfloat16 half double int int8 int16 "
        "int32 int64 uint8 uint16 uint32 uint64 long short bool complex64 "
        "complex128 float8_e4m3fn float8_e5m2 float8_e4m3fnuz float8_e5m2fnuz"
    ).split()
)


def is_dtype_name(qualname: str) -> bool:
    return qualname.startswith("torch.") and qualname[6:] in DTYPE_NAMES

# Tensor methods that move no math.
GLUE_METHODS = frozenset(
    (
        "view view_as reshape reshape_as permute transpose t T mT contiguous "
        "expand expand_as unsqueeze squeeze flatten unflatten chunk split "
        "tensor_split unbind narrow select as_strided movedim moveaxis "
        "swapaxes swapdims unfold "
        "size stride numel dim ndimension nelement element_size data_ptr "
        "storage_offset is_contiguous get_device is_floating_point "
        "is_complex untyped_storage "
        "new_empty new_empty_strided new_zeros empty_like zero_ "
        "clone detach copy_ cuda npu cpu requires_grad_ "
        "item tolist numpy"
    ).split()
)

# Methods whose result is a Python value, not a tensor.
NON_TENSOR_METHODS = frozenset(
    (
        "size stride numel dim ndimension nelement element_size data_ptr "
        "storage_offset is_contiguous get_device is_floating_point "
        "is_complex item tolist numpy untyped_storage"
    ).split()
)

# torch.* calls whose result is not a tensor.
NON_TENSOR_FUNCTIONS = frozenset(
    "torch." + n
    for n in (
        "numel is_tensor is_floating_point is_complex finfo iinfo device "
        "dtype Size get_default_dtype no_grad inference_mode enable_grad "
        "set_grad_enabled is_grad_enabled manual_seed"
    ).split()
)

# Attributes of a tensor that are themselves tensors (the rest is metadata).
TENSOR_ATTRIBUTES = frozenset("T mT H mH data real imag grad".split())

# Conversions: data changes although no operator is written.
CONVERSION_METHODS = frozenset(
    "float half bfloat16 double int long short bool byte char type".split()
)

# nn layers that do no math when called.
GLUE_LAYERS = frozenset("torch.nn." + n for n in "Identity Flatten Unflatten Module".split())
# nn containers: calling, iterating or indexing one reaches its members (`bindings.Container`).
CONTAINER_CLASSES = frozenset("torch.nn." + n for n in "Sequential ModuleList ModuleDict ParameterList ParameterDict".split())
# Methods that hand a container new members, and those that read members out of it.
CONTAINER_ADDS = frozenset("append extend insert add_module update setdefault".split())
CONTAINER_READS = frozenset("get pop setdefault __getitem__".split())
CONTAINER_VIEWS = frozenset("values items copy children modules".split())

# Python builtins that compute when handed a tensor.
COMPUTING_BUILTINS = frozenset(
    "builtins." + n for n in "abs sum min max pow round divmod".split()
)

# Decorators/wrappers that keep a function a Triton kernel.
KERNEL_WRAPPERS = frozenset(
    ("triton.jit", "triton.autotune", "triton.heuristics", "triton.runtime.jit.jit")
)
# Calls that return (a wrapper of) their first argument.
PASS_THROUGH_CALLS = frozenset(("functools.partial", "functools.wraps"))

# triton.language calls that only move data or compute indices.
TL_DATA_MOVEMENT = frozenset(
    "triton.language." + n
    for n in (
        "load store program_id num_programs arange cdiv multiple_of "
        "max_contiguous max_constancy static_assert static_print "
        "device_print device_assert static_range range full zeros "
        "zeros_like broadcast broadcast_to reshape view expand_dims "
        "make_block_ptr advance make_tensor_descriptor load_tensor_descriptor "
        "store_tensor_descriptor cast where constexpr assume debug_barrier"
    ).split()
)


def is_torch_name(qualname: str) -> bool:
    root = qualname.split(".", 1)[0]
    return root in TORCH_ROOTS


def is_glue_function(qualname: str, extra: frozenset[str] = frozenset()) -> bool:
    if qualname.startswith("torch.Tensor."):  # `torch.Tensor.relu(x)` computes like `x.relu()`
        method = qualname[len("torch.Tensor."):]
        return method in GLUE_METHODS or f"Tensor.{method}" in extra
    return (
        qualname in GLUE_FUNCTIONS
        or qualname == "torch.Tensor"
        or qualname in extra
        or qualname.startswith(GLUE_PREFIXES)
    )
