"""What names stand for: bindings, scopes, functions and classes of one module.

Plain data filled in by the walk (`tritonlint.walk`) and read by the module
model (`tritonlint.model`); nothing here resolves a name or infers a type.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import NamedTuple

import libcst as cst

# Node types the walk records per function, so that rules can ask for them
# without walking the tree again (`Function.nodes`).
RECORDED = (
    cst.Call,
    cst.Name,
    cst.Attribute,
    cst.Subscript,
    cst.BinaryOperation,
    cst.UnaryOperation,
    cst.Comparison,
    cst.AugAssign,
    cst.Assign,
    cst.AnnAssign,
    cst.Try,
    cst.Global,
    cst.Import,
    cst.ImportFrom,
    cst.Del,
    cst.With,
    cst.For,
    cst.While,
)


class NotRecorded(LookupError):
    """A query for a node type the walk does not record: an empty answer would be a silent lie."""


# ---------------------------------------------------------------- what a name may stand for
class External:
    """A name that lives outside this module, fully qualified (`torch.sum`)."""

    __slots__ = ("qualname",)

    def __init__(self, qualname: str) -> None:
        self.qualname = qualname

    def __eq__(self, other: object) -> bool:
        return isinstance(other, External) and other.qualname == self.qualname

    def __hash__(self) -> int:
        return hash(("ext", self.qualname))

    def __repr__(self) -> str:
        return f"External({self.qualname!r})"


class Instance:
    """An object made by calling a class (`nn.Linear(...)`, `Helper()`)."""

    __slots__ = ("of",)

    def __init__(self, of: "ClassInfo | External") -> None:
        self.of = of

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instance) and other.of == self.of

    def __hash__(self) -> int:
        return hash(("inst", self.of))

    def __repr__(self) -> str:
        return f"Instance({self.of!r})"


class Launcher:
    """`kernel[grid]`: calling it launches `kernel`."""

    __slots__ = ("kernel",)

    def __init__(self, kernel: "Function") -> None:
        self.kernel = kernel

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Launcher) and other.kernel is self.kernel

    def __hash__(self) -> int:
        return hash(("launch", id(self.kernel)))

    def __repr__(self) -> str:
        return f"Launcher({self.kernel.qualname})"


class Container:
    """A collection built in this module: a list/tuple/set/dict literal, or `nn.Sequential(...)`,
    `nn.ModuleList(...)`, `nn.ModuleDict(...)`. Calling, iterating or indexing it reaches its
    members (`Names.members`): whatever it was built with, or later given through `append`/`extend`/...."""

    __slots__ = ("node", "scope")

    def __init__(self, node: cst.CSTNode, scope: "Scope") -> None:
        self.node = node
        self.scope = scope

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Container) and other.node is self.node

    def __hash__(self) -> int:
        return hash(("container", id(self.node)))

    def __repr__(self) -> str:
        return f"Container({type(self.node).__name__})"


# ---------------------------------------------------------------- bindings and scopes
class _Kind(enum.Enum):
    """An enum that refuses to be compared with a string: `kind == "assign"` would be silently False."""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            raise TypeError(f"compare {type(self).__name__} members, not the string {other!r}")
        return self is other

    __hash__ = enum.Enum.__hash__


class BindingKind(_Kind):
    IMPORT = "import"  # `import x`, `from x import y`: `qualname` says what it stands for
    DEF = "def"  # `def f`: `function` is set
    CLASS = "class"  # `class C`: `cls` is set
    ASSIGN = "assign"  # `x = value`, `x: T = value`, tuple targets (`index` >= 0, or -1 when unknown)
    WALRUS = "walrus"  # `(x := value)`
    PARAM = "param"  # a parameter of a def or lambda
    LOOP = "loop"  # `for`/`with ... as`/comprehension targets: the element is unknown
    OTHER = "other"  # `except E as x`, `x += 1` without an earlier binding


class Binding:
    __slots__ = ("kind", "name", "node", "value", "scope", "qualname", "index", "function", "cls")

    def __init__(self, kind: BindingKind, name: str, scope: "Scope", node=None, value=None, qualname=None, index=None):
        self.kind = kind
        self.name = name
        self.scope = scope
        self.node = node
        self.value = value  # assigned expression, when there is one
        self.qualname = qualname  # imports: what the name stands for
        self.index = index  # tuple unpacking: position in the target, or -1 if unknown
        self.function: Function | None = None
        self.cls: ClassInfo | None = None


class ScopeKind(_Kind):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    LAMBDA = "lambda"
    COMPREHENSION = "comprehension"


class Scope:
    __slots__ = ("kind", "parent", "function", "bindings", "globals", "nonlocals")

    def __init__(self, kind: ScopeKind, parent: "Scope | None", function: "Function | None") -> None:
        self.kind = kind
        self.parent = parent
        self.function = function  # the function whose code runs in this scope
        self.bindings: dict[str, list[Binding]] = {}
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()

    def module(self) -> "Scope":
        s = self
        while s.parent is not None:
            s = s.parent
        return s

    def bind(self, b: Binding) -> None:
        target = self
        if b.name in self.globals:
            target = self.module()
        elif b.name in self.nonlocals:
            s = self.parent
            while s is not None and not (s.kind is ScopeKind.FUNCTION and b.name in s.bindings):
                s = s.parent
            target = s or self
        elif self.kind is ScopeKind.COMPREHENSION and b.kind is BindingKind.WALRUS:
            target = self.parent
            while target.kind is ScopeKind.COMPREHENSION:
                target = target.parent
        b.scope = target
        target.bindings.setdefault(b.name, []).append(b)


# ---------------------------------------------------------------- functions and classes
class Function:
    """A def, a lambda, or the module body (`<module>`)."""

    def __init__(self, qualname: str, name: str, node: cst.CSTNode, scope: Scope, cls: "ClassInfo | None" = None):
        self.qualname = qualname
        self.name = name
        self.node = node
        self.scope = scope
        self.cls = cls  # set for methods defined in a class body
        self.params: list[cst.Param] = []
        self.decorators: list[cst.Decorator] = []
        self.is_kernel = False  # set once by the model's kernel discovery
        self.is_lambda = isinstance(node, cst.Lambda)
        self.returns: list[tuple[cst.BaseExpression, Scope]] = []
        self.lambdas: list[Function] = []
        self.subscript_stores: list[tuple[cst.Subscript, Scope, cst.BaseExpression | None]] = []  # `x[i] = value`
        self._nodes: dict[type, list[tuple[cst.CSTNode, Scope]]] = {t: [] for t in RECORDED}

    def nodes(self, kind: type) -> list[tuple[cst.CSTNode, Scope]]:
        """Every node of a recorded type in this function's own code, with its scope."""
        try:
            return self._nodes[kind]
        except KeyError:
            raise NotRecorded(f"the walk does not record {kind.__name__}; add it to bindings.RECORDED") from None

    def record(self, node: cst.CSTNode, scope: Scope) -> None:
        self._nodes[type(node)].append((node, scope))

    def param_names(self) -> list[str]:
        return [p.name.value for p in self.params]

    def __repr__(self) -> str:
        return f"Function({self.qualname})"


class ClassInfo:
    def __init__(self, qualname: str, name: str, node: cst.ClassDef, scope: Scope):
        self.qualname = qualname
        self.name = name
        self.node = node
        self.scope = scope  # the class body's scope
        self.methods: dict[str, Function] = {}
        # `self.attr = value` in any method: attr -> [(value, scope, method)]
        self.instance_attrs: dict[str, list[tuple[cst.BaseExpression, Scope, Function]]] = {}
        self.buffers: set[str] = set()  # names given to `self.register_buffer`

    def __repr__(self) -> str:
        return f"ClassInfo({self.qualname})"


@dataclasses.dataclass(frozen=True)
class LaunchSite:
    kernel: Function
    node: cst.Subscript  # `kernel[grid]`
    function: Function  # the host function the launch is in


class CallSite(NamedTuple):  # a tuple: rules make one per call, so it must be cheap
    node: cst.Call
    scope: Scope
    function: Function
    names: tuple[str, ...]  # external qualified names the callee may stand for, sorted
